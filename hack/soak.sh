#!/usr/bin/env bash
# make soak N=5: run the scenario suite and the mutation matrix N times in a row on the kind cluster,
# in two phases: one-node (the whole suite and matrix on the one-node cluster) and multi-node (the
# cluster recreated with two workers, the node and zone scenarios with their rows: what
# `make test-multinode` runs). Each run's report is kept under _out/soak/PHASE/run-I, and each phase
# prints its stability figures: FIGURE verdict-flips (a verdict whose status differed between runs)
# and FIGURE inconclusive-rate. SOAK_PHASES picks the phases ("one-node multi-node" by default).
# Too long for CI (about 20 minutes a one-node run, 12 a multi-node one, on a 2-core machine); run it
# alone. The cluster is left as the last phase made it.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-5}
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 2 ]; then
  echo "soak: N must be a number >= 2 (runs to compare), got '$n'" >&2
  exit 2
fi
phases=${SOAK_PHASES:-one-node multi-node}
. hack/phases.sh
check_phases soak SOAK_PHASES "$phases"
out=$(realpath -m "${SOAK_OUT:-_out/soak}")
rm -rf "$out"
mkdir -p "$out"
hack/host-prep.sh
hack/images.sh
export KUBECONFIG=${KUBECONFIG:-/var/cache/probegate/probegate.kubeconfig}
rc=0
for p in $phases; do
  workers=0 feature=()
  if [ "$p" = multi-node ]; then
    workers=2 feature=(-args --feature='node-|zone-')
  fi
  # `cluster create` recreates a running cluster whose number of nodes differs.
  PROBEGATE_WORKERS=$workers make --no-print-directory cluster
  dirs=()
  for i in $(seq 1 "$n"); do
    echo "== soak $p run $i of $n ($(date -u +%H:%M:%S))"
    # A failing verdict is data here, not the end of the soak: the figures judge the runs together.
    PROBEGATE_SUITE_OUT="$out/$p/run-$i" go test -count=1 -timeout 60m \
      -run '^(TestIntegrationScenarios|TestIntegrationMutationMatrix)$' ./scenarios "${feature[@]}" \
      >"$out/$p-run-$i.log" 2>&1 || echo "   run $i had test failures (see $out/$p-run-$i.log)"
    grep -E '^(--- FAIL|ok|FAIL)' "$out/$p-run-$i.log" | sed 's/^/   /' || true
    dirs+=("$out/$p/run-$i")
  done
  echo "== soak $p: figures over $n runs"
  # A flip fails soakfig; the other phase still runs, and the soak exits 1 at the end.
  go run ./hack/soakfig --phase "$p" "${dirs[@]}" | tee "$out/$p-figures.txt" || rc=1
done
exit "$rc"
