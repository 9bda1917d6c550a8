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
echo "== tests"
go test -count=1 -timeout 80m -p "${TEST_PARALLEL:-1}" ./...
