#!/usr/bin/env bash
# make soak N=5: run the scenario suite and the mutation matrix N times in a row on the kind cluster
# (created if needed, kept between runs), keep each run's report under _out/soak/run-I, and print the
# stability figures: FIGURE verdict-flips (a verdict whose status differed between runs) and FIGURE
# inconclusive-rate. Too long for CI (about 15 minutes a run on a 2-core machine); run it alone.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-5}
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 2 ]; then
  echo "soak: N must be a number >= 2 (runs to compare), got '$n'" >&2
  exit 2
fi
out=$(realpath -m "${SOAK_OUT:-_out/soak}")
rm -rf "$out"
mkdir -p "$out"
hack/host-prep.sh
hack/images.sh
make --no-print-directory cluster
export KUBECONFIG=${KUBECONFIG:-/var/cache/probegate/probegate.kubeconfig}
dirs=()
for i in $(seq 1 "$n"); do
  echo "== soak run $i of $n ($(date -u +%H:%M:%S))"
  # A failing verdict is data here, not the end of the soak: the figures judge the runs together.
  PROBEGATE_SUITE_OUT="$out/run-$i" go test -count=1 -timeout 60m \
    -run '^(TestIntegrationScenarios|TestIntegrationMutationMatrix)$' ./scenarios >"$out/run-$i.log" 2>&1 || \
    echo "   run $i had test failures (see $out/run-$i.log)"
  grep -E '^(--- FAIL|ok|FAIL)' "$out/run-$i.log" | sed 's/^/   /' || true
  dirs+=("$out/run-$i")
done
go run ./hack/soakfig "${dirs[@]}" | tee "$out/figures.txt"
