#!/usr/bin/env bash
# `make bench`: every speed and memory target, one line each:
#   FIGURE <name> <value> <unit> goal <op><value>
# First the cluster figures (warm delete and create: this recreates the local cluster), then the Go
# benchmarks, which print their own FIGURE lines (some need the cluster; they reuse it).
# Then the 3-node cluster (1 control plane + 2 workers): create with the node image re-assembled
# (cold), create (warm), reuse, delete, and each node container's memory a minute after it is
# ready; the single-node cluster is created again after it.
# BENCH_SKIP_CLUSTER=1 skips the cluster timing (both), BENCH_SKIP_MULTINODE=1 the 3-node part;
# BENCH_FILTER narrows the Go benchmarks (regexp).
# The load ceilings (load-max-rate-host, load-max-rate-agents, vegeta-bare-max-rate, their ratios,
# harness-cpu-per-1000rps and the agents' costs) come from BenchmarkLoadMaxRate in internal/runner: a
# search of a few minutes per generator, run while the 3-node cluster is up (its agents go one per
# worker node); with the 3-node part skipped it runs on whatever cluster is up before the Go
# benchmarks, and never creates one. BENCH_SKIP_LOAD=1 skips it. Only it, on the running cluster:
#   BENCH_SKIP_CLUSTER=1 BENCH_SKIP_MULTINODE=1 BENCH_FILTER='^$' hack/bench.sh
# The lint figures (lint-precision, lint-recall, their -services-apart twins with each workload
# linted alone, lint-recall-gap-points and lint-precision-gap-points between the two,
# lint-corpus-seconds-per-mb) come from BenchmarkLintCorpus in internal/lint: it fetches the
# real-world corpus (internal/lint/testdata/real/corpus.txt) through the Go module cache and scores
# it against labels.txt; modules that cannot be downloaded are left out. TestIntegrationRealCorpus
# prints the two gap figures too (go test -v). lint-seconds-per-mb comes from
# BenchmarkLintGenerated, on a generated 5 MB input of Deployments and Services.
# Only those: BENCH_SKIP_CLUSTER=1 BENCH_FILTER=Lint hack/bench.sh
# BENCH_SETUP_REPORT=DIR adds FIGURE setup-overhead from that run's report directory (hack/setupfig:
# namespace → load beyond the target's own rollout, the worst scenario); alone, with no cluster:
#   go run ./hack/setupfig DIR
# BENCH_GATE_REPORT=DIR adds FIGURE time-to-verdict-gate from a gate run's report directory
# (hack/ci-recipe.sh leaves one in _out/ci/gate; hack/gatefig: start to verdicts against the gate
# profile's budget); alone: go run ./hack/gatefig DIR
set -euo pipefail
cd "$(dirname "$0")/.."
source hack/lib/common.sh

figure() { printf 'FIGURE %s %s %s goal %s\n' "$@"; }
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# load_max_rate runs BenchmarkLoadMaxRate on the cluster that is up (its namespace is deleted at its
# end); its output joins bench.log, so a failure fails the bench.
load_max_rate() {
  [ "${BENCH_SKIP_LOAD:-}" = 1 ] && return 0
  PROBEGATE_BENCH_LOAD_MAX=1 go test -run '^$' -bench '^BenchmarkLoadMaxRate$' -benchtime 1x -timeout 30m ./internal/runner 2>&1 |
    tee -a "$out/bench.log" | grep -E '^(FIGURE|FAIL|---|ok|panic)' || true
}

go build -o "$out/probegate" ./cmd/probegate
if [ -n "${BENCH_SETUP_REPORT:-}" ]; then
  go run ./hack/setupfig "$BENCH_SETUP_REPORT" | tee -a "$out/bench.log" | grep '^FIGURE'
fi
if [ -n "${BENCH_GATE_REPORT:-}" ]; then
  go run ./hack/gatefig "$BENCH_GATE_REPORT" | tee -a "$out/bench.log" | grep '^FIGURE'
fi
image=$(hack/node-image.sh 2>/dev/null)
size=$(docker image inspect -f '{{.Size}}' "$image")
figure node-image-size "$(( size / 1024 / 1024 ))" MiB "<=1500"
if [ -f "$PROBEGATE_CACHE/node-image-build-seconds" ]; then
  figure node-image-cold-build "$(cat "$PROBEGATE_CACHE/node-image-build-seconds")" s "<=1800"
fi

if [ "${BENCH_SKIP_CLUSTER:-}" != 1 ]; then
  "$out/probegate" cluster create >/dev/null 2>&1
  s=$(now); "$out/probegate" cluster delete >/dev/null 2>&1
  figure cluster-delete "$(since "$s")" s "<=20"
  s=$(now); "$out/probegate" cluster create >/dev/null 2>&1
  figure cluster-create-warm "$(since "$s")" s "<=90"
fi

if [ "${BENCH_SKIP_CLUSTER:-}" != 1 ] && [ "${BENCH_SKIP_MULTINODE:-}" != 1 ]; then
  pg() { PROBEGATE_WORKERS=2 "$out/probegate" cluster "$@" >/dev/null 2>&1; }
  pg delete
  docker rmi "$image" >/dev/null
  s=$(now); pg create
  figure cluster-3node-create-cold "$(since "$s")" s "<=240"
  s=$(now); pg create
  figure cluster-3node-reuse "$(since "$s")" s "<=30"
  s=$(now); pg delete
  figure cluster-3node-delete "$(since "$s")" s "<=30"
  s=$(now); pg create
  figure cluster-3node-create-warm "$(since "$s")" s "<=150"
  sleep 60
  # docker stats names each node container: probegate-control-plane, probegate-worker, ...
  # shellcheck disable=SC2046 # one argument per node container
  docker stats --no-stream --format '{{.Name}} {{.MemUsage}}' $(docker ps -q --filter label=io.x-k8s.kind.cluster=probegate) |
    while read -r name usage _; do
      mib=$(awk -v u="$usage" 'BEGIN { v = u + 0; if (u ~ /GiB/) v *= 1024; else if (u ~ /KiB/) v /= 1024; printf "%.0f", v }')
      case "$name" in *-control-plane) goal="<=768" ;; *) goal="<=256" ;; esac
      figure "cluster-3node-mem-${name#probegate-}" "$mib" MiB "$goal"
    done
  load_max_rate
  pg delete
  "$out/probegate" cluster create >/dev/null 2>&1
fi

if [ "${BENCH_SKIP_CLUSTER:-}" = 1 ] || [ "${BENCH_SKIP_MULTINODE:-}" = 1 ]; then
  load_max_rate
fi

go test -run '^$' -bench "${BENCH_FILTER:-.}" -benchtime 1x -timeout 30m ./... 2>&1 | tee -a "$out/bench.log" | grep -E '^(FIGURE|FAIL|---|ok|panic)' || true
grep -q '^FAIL' "$out/bench.log" && { echo "a benchmark failed (see above)"; exit 1; }
exit 0
