#!/usr/bin/env bash
# The test command (`make test`): lint, then every test — unit and integration — against the real
# offline kind cluster. It prepares the host and brings the cluster up itself (a cold machine builds
# the node image first), and deletes the cluster at the end so the host's sysctls are restored.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase heading says how long the test command has run so far (the CI budget is in minutes).
phase() { printf '== %s (at %dm%02ds)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }

phase "host"
hack/host-prep.sh
phase "lint"
make --no-print-directory lint
phase "images"
if [ -x hack/images.sh ]; then hack/images.sh; fi
# The cluster lifecycle brackets the run: delete any cluster and create it warm (its fences
# checked) here, then, on the way out, delete it and check the host's sysctls are what they were
# before it. The tests in between use the cluster it created.
snapshot=$(mktemp)
lifecycle() {
  PROBEGATE_LIFECYCLE=$1 PROBEGATE_LIFECYCLE_SNAPSHOT=$snapshot go test -count=1 -timeout 60m \
    -run '^TestIntegrationClusterLifecycle$' -v ./internal/cluster
}
down() {
  local rc=$?
  phase "cluster down (delete; host sysctls unchanged)"
  if ! lifecycle down; then
    go run ./cmd/probegate cluster delete || true
    rc=1
  fi
  rm -f "$snapshot"
  exit "$rc"
}
phase "cluster lifecycle (delete, warm create)"
trap down EXIT
lifecycle up
phase "unit tests (every package)"
go test -short -count=1 -timeout 20m ./...
phase "integration tests on the cluster"
# ./internal/lint's TestIntegrationRealCorpus and TestIntegrationSARIFSchema need no cluster but the
# Go module proxy (~35 s into an empty module cache, ~6 s warm); they fail when it cannot be
# reached, unless PROBEGATE_OFFLINE=1.
go test -count=1 -timeout 40m -p 1 -run 'Integration' ./internal/cluster ./internal/deploy ./fixtures/... ./internal/cli \
  ./observers ./internal/lint ./reports/...
phase "fault injectors on the cluster"
go test -count=1 -timeout 30m -run 'Integration' ./internal/faults
if [ "${PROBEGATE_SKIP_SCENARIOS:-0}" = 1 ]; then
  phase "scenario suite and mutation matrix: skipped (PROBEGATE_SKIP_SCENARIOS=1)"
  exit 0
fi
# The product's own proof: every scenario PASSes against the good target, and every anti-pattern
# variant FAILs its designated verdict. Run alone (-p 1, nothing else on the cluster): the verdicts
# time real probes on a 2-core machine.
phase "scenario suite and mutation matrix"
if [ -n "${PROBEGATE_FEATURE:-}" ]; then
  # Only the scenarios whose name matches (e.g. node- on a cluster with workers) and their rows.
  go test -count=1 -timeout 60m -run '^(TestCatalogueLoads|TestIntegrationScenarios)$' -v ./scenarios -args --feature="$PROBEGATE_FEATURE"
  go test -count=1 -timeout 60m -run '^TestIntegrationMutationMatrix$' -v ./scenarios -args --feature="$PROBEGATE_FEATURE" --labels=kind=mutation
  exit 0
fi
go test -count=1 -timeout 60m -run '^(TestCatalogueLoads|TestIntegrationScenarios|TestIntegrationMutationMatrix)$' -v ./scenarios
