#!/usr/bin/env bash
# The test command (`make test`): lint and every test — unit and integration — against the real
# offline kind cluster, in two phases: one-node (every package's integration tests, the scenario
# suite and the mutation matrix) and multi-node (the cluster recreated with two workers: the
# multi-node cluster test, the node and zone scenarios and their rows). It prepares the host and
# brings each cluster up itself (a cold machine builds the node image first), and deletes the
# cluster at the end so the host's sysctls are restored.
#
# PROBEGATE_PHASES picks the phases ("one-node multi-node" by default; make test-multinode runs
# multi-node alone). PROBEGATE_SKIP_SCENARIOS=1 leaves out the scenario runs of both phases.
set -euo pipefail
cd "$(dirname "$0")/.."
# -trimpath keeps the checkout's directory out of the build cache's keys: CI's clean clone (a new
# directory each time) then reuses what an earlier run compiled instead of compiling every package
# of the project again (without it, lint and the unit tests each took 1.5–3 min of compiling on
# 2026-12-08 in a new worktree, against about a minute in the same one).
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"
# Each phase heading says how long the test command has run so far (the CI budget is in minutes).
phase() { printf '== %s (at %dm%02ds)\n' "$1" $((SECONDS / 60)) $((SECONDS % 60)); }
phases=${PROBEGATE_PHASES:-one-node multi-node}
. hack/phases.sh
check_phases test PROBEGATE_PHASES "$phases"
scenarios=1
[ "${PROBEGATE_SKIP_SCENARIOS:-0}" = 1 ] && scenarios=0
first=${phases%% *} # lint runs beside the first phase's cluster create
last=${phases##* }  # the unit tests beside the last phase's

phase "host"
hack/host-prep.sh
phase "images"
if [ -x hack/images.sh ]; then hack/images.sh; fi

# The cluster lifecycle brackets each phase: delete any cluster and create it warm (its fences
# checked), then delete it and check the host's sysctls are what they were before it. The tests in
# between use the cluster it created.
snapshot=$(mktemp)
up=0
# Background jobs (the unit tests, the other lane): a job started with & ignores SIGINT, so on the
# way out they are stopped before the cluster is deleted (a lane's next package would otherwise
# create the cluster again).
jobs_bg=()
lifecycle() {
  PROBEGATE_LIFECYCLE=$1 PROBEGATE_LIFECYCLE_SNAPSHOT=$snapshot go test -count=1 -timeout 60m \
    -run '^TestIntegrationClusterLifecycle$' -v ./internal/cluster
}
down() {
  phase "cluster down (delete; host sysctls unchanged)"
  if ! lifecycle down; then
    go run ./cmd/probegate cluster delete || true
    up=0
    return 1
  fi
  up=0
}
# kill_tree stops a process and every process under it (go test runs its test binaries as children).
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do
    kill_tree "$child"
  done
  kill -TERM "$1" 2>/dev/null || true
}
finish() {
  local rc=$?
  local pid
  for pid in "${jobs_bg[@]}"; do
    kill_tree "$pid"
  done
  for pid in "${jobs_bg[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "$up" = 1 ] && ! down; then
    rc=1
  fi
  rm -f "$snapshot"
  exit "$rc"
}
trap finish EXIT

# The product's own proof, run alone (-p 1, nothing else on the cluster; the verdicts time real
# probes on a 2-core machine): every scenario PASSes against the good target, and every
# anti-pattern variant FAILs its designated verdict with its evidence. suite [FEATURE [LABELS]]
# filters the features by name and label.
suite() {
  local args=()
  [ -n "${1:-}" ] && args=(-args --feature="$1")
  [ -n "${2:-}" ] && args+=(--labels="$2")
  go test -count=1 -timeout 60m -run '^(TestCatalogueLoads|TestIntegrationScenarios|TestIntegrationMutationMatrix)$' \
    -v ./scenarios "${args[@]}"
}

# beside LABEL BG FG...: runs the function BG in the background, its output kept in a file and
# printed under LABEL when it ends, while FG... runs; fails when either does. FG runs in a condition,
# where set -e does not hold: a step that must stop the rest says so with && or || return.
beside() {
  local label=$1 bg=$2 out rc=0
  shift 2
  out=$(mktemp)
  "$bg" >"$out" 2>&1 &
  local pid=$!
  jobs_bg=("$pid")
  "$@" || rc=1
  wait "$pid" || rc=1
  jobs_bg=()
  echo "-- $label:"
  cat "$out"
  rm -f "$out"
  [ "$rc" = 0 ]
}

# The unit tests need no cluster: they run beside the last phase's cluster create (it mostly waits
# on the nodes' containers and the API server; the multi-node one, ~70 s, and its pod network test
# cover most of the unit tests' ~2.5 min), without a phase's PROBEGATE_WORKERS (a unit test reads it).
unit_tests() { env -u PROBEGATE_WORKERS go test -short -count=1 -timeout 20m ./...; }

run_lint() { make --no-print-directory lint; }
lint_and_unit_tests() { run_lint && unit_tests; }

# create_beside PHASE HEADING CMD... runs CMD, a phase's cluster create, with what runs beside it:
# lint (gofmt, go vet) beside the first phase's, so a lint failure stops make test a minute in; the
# unit tests beside the last phase's (every phase is the first or the last).
create_beside() {
  local p=$1 heading=$2 label=lint bg=run_lint
  shift 2
  if [ "$p" = "$last" ]; then
    label="the unit tests (every package)" bg=unit_tests
    if [ "$p" = "$first" ]; then
      label="lint, then $label" bg=lint_and_unit_tests
    fi
  fi
  phase "$heading, and beside it $label"
  beside "$label" "$bg" "$@"
}

# The integration tests' two lanes (one_node): every package but the CLI's, then the gRPC pair's
# control, then the audited paths' controls N2 and N5 | the CLI's tests but the StatefulSet rollouts
# and the audited paths' controls, then the gRPC pair's good app, then the controls N1 and N11
# (internal/cli/audit_controls_integration_test.go; N16, lint --confirm, is run by hand). The
# controls are split so the lanes end about together (N2 ~170 s, N5 ~65 s | N1 ~100 s, N11 ~95 s).
other_lane() {
  go test -count=1 -timeout 40m -p 1 -run 'Integration' ./internal/cluster ./internal/deploy ./fixtures/... \
    ./observers ./internal/lint ./reports/... ./internal/faults &&
    go test -count=1 -timeout 40m -run '^TestIntegrationGRPCGoaway$/^no-goaway$' ./internal/cli &&
    go test -count=1 -timeout 40m -run '^TestIntegrationAuditControls$/^N(2|5)-' ./internal/cli
}
cli_lane() {
  go test -count=1 -timeout 40m -run 'Integration' -skip '^TestIntegration(GRPCGoaway|StatefulSetRollouts|AuditControls)$' ./internal/cli &&
    go test -count=1 -timeout 40m -run '^TestIntegrationGRPCGoaway$/^good$' ./internal/cli &&
    go test -count=1 -timeout 40m -run '^TestIntegrationAuditControls$/^N(1|11)-' ./internal/cli
}

# Every command of a phase takes the cluster's shape from PROBEGATE_WORKERS: a test that creates
# or reuses the cluster (testcluster.Require) would otherwise recreate one of another shape.
one_node() {
  export PROBEGATE_WORKERS=0
  up=1
  create_beside one-node "one-node: cluster lifecycle (delete, warm create)" lifecycle up
  # Two lanes, each one scenario-sized job at a time, as the suite's two slots: the CLI's tests in
  # one, with the good app of the gRPC GOAWAY pair; every other package's integration tests in the
  # other (the fault injectors among them), then the pair's control, in its own output file printed
  # when it ends. The StatefulSet rollouts run after, alone: each of its runs takes both slots, and
  # its good app is judged on a quiet host.
  # ./internal/lint's TestIntegrationRealCorpus and TestIntegrationSARIFSchema need no cluster but
  # the Go module proxy (~35 s into an empty module cache, ~6 s warm); they fail when it cannot be
  # reached, unless PROBEGATE_OFFLINE=1.
  phase "one-node: integration tests, two lanes (the CLI | every other package, then the gRPC pair's control)"
  beside "the other lane" other_lane cli_lane
  phase "one-node: the StatefulSet rollouts (good, then broken; each run two scenarios side by side)"
  go test -count=1 -timeout 40m -run '^TestIntegrationStatefulSetRollouts$' ./internal/cli
  if [ "$scenarios" = 1 ]; then
    phase "one-node: scenario suite and mutation matrix"
    suite
  else
    phase "one-node: scenario suite and mutation matrix: skipped (PROBEGATE_SKIP_SCENARIOS=1)"
  fi
  down
}

# (called in a condition, where set -e does not hold: each step says its own failure)
multi_node_up() {
  lifecycle up || return 1
  go test -count=1 -timeout 20m -run '^TestIntegrationClusterMultiNode$' ./internal/cluster
}

multi_node() {
  export PROBEGATE_WORKERS=2
  up=1
  local heading="multi-node: cluster lifecycle (delete, warm create with 2 workers), the pod network between nodes"
  create_beside multi-node "$heading" multi_node_up
  if [ "$scenarios" = 1 ]; then
    if [ "${PROBEGATE_MULTINODE_GOOD:-0}" = 1 ]; then
      phase "multi-node: node and zone scenarios against the good target, and their rows"
      suite 'node-|zone-'
    else
      # The rows only: the good target's runs of these three scenarios (5 min more) are in
      # make test-multinode and make soak, not in the CI budget.
      phase "multi-node: the mutation matrix's rows of the node and zone scenarios"
      suite 'node-|zone-' kind=mutation
    fi
  else
    phase "multi-node: node and zone scenarios: skipped (PROBEGATE_SKIP_SCENARIOS=1)"
  fi
  down
}

for p in $phases; do
  case $p in
  one-node) one_node ;;
  multi-node) multi_node ;;
  esac
done
phase "done"
