#!/usr/bin/env bash
# `make bench`: every speed and memory target, one line each:
#   FIGURE <name> <value> <unit> goal <op><value>
# First the cluster figures (warm delete and create: this recreates the local cluster), then the Go
# benchmarks, which print their own FIGURE lines (some need the cluster; they reuse it).
# BENCH_SKIP_CLUSTER=1 skips the cluster timing; BENCH_FILTER narrows the Go benchmarks (regexp).
# The lint figures (lint-precision, lint-recall, lint-seconds-per-mb) come from BenchmarkLintCorpus in
# internal/lint: it fetches the real-world corpus (internal/lint/testdata/real/corpus.txt) through the
# Go module cache and scores it against labels.txt; modules that cannot be downloaded are left out.
# Only those: BENCH_SKIP_CLUSTER=1 BENCH_FILTER=LintCorpus hack/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source hack/lib/common.sh

figure() { printf 'FIGURE %s %s %s goal %s\n' "$@"; }
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

go build -o "$out/probegate" ./cmd/probegate
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

go test -run '^$' -bench "${BENCH_FILTER:-.}" -benchtime 1x -timeout 30m ./... 2>&1 | tee "$out/bench.log" | grep -E '^(FIGURE|FAIL|---|ok|panic)' || true
grep -q '^FAIL' "$out/bench.log" && { echo "a benchmark failed (see above)"; exit 1; }
exit 0
