#!/usr/bin/env bash
# The test command (`make test`): lint, then every test — unit and integration — against the real
# offline kind cluster. It prepares the host and brings the cluster up itself (a cold machine builds
# the node image first), and deletes the cluster at the end so the host's sysctls are restored.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== host"
hack/host-prep.sh
echo "== lint"
make --no-print-directory lint
echo "== images"
if [ -x hack/images.sh ]; then hack/images.sh; fi
echo "== cluster lifecycle (delete, warm create, delete; host sysctls unchanged)"
PROBEGATE_LIFECYCLE=1 go test -count=1 -timeout 60m -run '^TestIntegrationClusterLifecycle$' -v ./internal/cluster
echo "== cluster"
go run ./cmd/probegate cluster create
trap 'echo "== cluster down"; go run ./cmd/probegate cluster delete' EXIT
echo "== tests (every package but the scenario suite)"
go test -count=1 -timeout 50m -p "${TEST_PARALLEL:-1}" $(go list ./... | grep -v '/scenarios$')
echo "== scenario suite: every catalogue scenario against the good target"
suite='^(TestCatalogueLoads|TestIntegrationScenarios)$'
# The mutation matrix (each anti-pattern variant must FAIL its verdict) runs with PROBEGATE_MUTATIONS=1.
if [ "${PROBEGATE_MUTATIONS:-0}" = 1 ]; then suite='^(TestCatalogueLoads|TestIntegrationScenarios|TestIntegrationMutationMatrix)$'; fi
go test -count=1 -timeout 40m -run "$suite" -v ./scenarios 2>&1 | grep -E '^(=== RUN|--- |\s+--- |PASS|FAIL|ok|panic)|harness error|want PASS' ; test "${PIPESTATUS[0]}" = 0
