#!/usr/bin/env bash
# The CI recipe of docs/ci.md run on this machine: the GitHub Actions workflow's steps, the same
# probegate commands in the same order (hack/cirecipe_test.go holds them together), with the offline
# node image standing in for the registry one and, as the release candidate, the bundled app with no
# database brought as a user's target file (CI_TARGET=examples/podinfo/target.yaml for a real app).
# Both of the workflow's paths run, one after the other: the nightly suite with compare against the
# previous night, then the pre-release gate (--profile gate). Idempotent: caches are reused, the
# cluster is reused when it is up, and the previous "night" is the last run of this script.
# Exit: 1 when a run FAILed or erred, else 0: INCONCLUSIVE (3) and a regression against the previous
# night (compare's 4) are flagged, not fatal, as in the workflow. Usage: hack/ci-recipe.sh (as root, like make run).
source "$(dirname "$0")/lib/common.sh"
need_root "the CI recipe (host preparation, kind)"
cd "$REPO_ROOT"

step() { log "== step: $*"; }
# flag CODE WHAT: the workflow's exit-code policy: 1 (FAIL) and 2 (error) fail the job, 3 and 4 are flagged.
failed=0
flag() {
  case $1 in
    0) log "$2: passed" ;;
    3) log "$2: WARNING: INCONCLUSIVE (exit 3): some verdict could not be shown; see the summary" ;;
    4) log "$2: WARNING: REGRESSION (exit 4): a new FAIL or a drift against the previous night" ;;
    *) log "$2: FAILED (exit $1)"; failed=1 ;;
  esac
}

# The workflow's env: the target file, the image its manifests name and the candidate to run instead.
# CI_TARGET picks the app: by default the bundled app with no database as a user's target file
# (fixtures/nodb: it passes the default suite, so the recipe passes when every part works);
# examples/podinfo/target.yaml runs a real app (whose own FAILs then fail the job, as they would).
TARGET=${CI_TARGET:-fixtures/nodb/good.target.yaml}
[ -f "$TARGET" ] || die "no target file $TARGET"
# The image the manifests name, and the local image that stands for it: the target file's images:
# entry (name: local), else the first image: of its manifests (built here under that name).
APP_IMAGE=$(sed -n '/^images:/{n;s/^ *\([^ ]*\): .*/\1/p;q}' "$TARGET")
LOCAL_IMAGE=$(sed -n '/^images:/{n;s/^ *[^ ]*: *\([^ ]*\).*/\1/p;q}' "$TARGET")
if [ -z "$APP_IMAGE" ]; then
  APP_IMAGE=$(grep -rhoE '^ *image: *[^ ]+' "$(dirname "$TARGET")/$(sed -n 's/^manifests: *\[\([^],]*\).*/\1/p' "$TARGET")" 2>/dev/null | head -1 | sed 's/^ *image: *//')
  LOCAL_IMAGE=$APP_IMAGE
fi
[ -n "$APP_IMAGE" ] || die "no image named under images: in $TARGET nor in its manifests"
CANDIDATE="${LOCAL_IMAGE%:*}:rc"
OUT=_out/ci

step "build probegate (Go build cache: $(go env GOCACHE))"
go build -o bin/probegate ./cmd/probegate
export PATH="$REPO_ROOT/bin:$PATH"

step "host: docker, the egress fence"
hack/host-prep.sh

step "node image: the offline build stands in for the registry's (KIND_NODE_IMAGE)"
KIND_NODE_IMAGE="${KIND_NODE_IMAGE:-$(hack/node-image.sh)}"
export KIND_NODE_IMAGE
log "KIND_NODE_IMAGE=$KIND_NODE_IMAGE"

step "images the cluster runs, and the release candidate ($CANDIDATE)"
hack/images.sh
case $TARGET in examples/*/*) hack/examples.sh "$(basename "$(dirname "$TARGET")")" ;; esac
docker tag "$LOCAL_IMAGE" "$CANDIDATE"

step "cluster (reused when it is up)"
probegate cluster create

step "nightly: the whole catalogue against the candidate"
# The previous night's report is the artifact of the last run; here, this script's last nightly.
rm -rf "$OUT/previous"
if [ -f "$OUT/nightly/report.json" ]; then mv "$OUT/nightly" "$OUT/previous"; fi
code=0
probegate run --profile nightly --target "$TARGET" --image "$APP_IMAGE=$CANDIDATE" --out "$OUT/nightly" || code=$?
flag "$code" "nightly run"
if [ -f "$OUT/previous/report.json" ]; then
  probegate report "$OUT/nightly" --markdown --baseline "$OUT/previous" > "$OUT/nightly-summary.md" || true
  code=0
  probegate compare "$OUT/previous" "$OUT/nightly" || code=$?
  flag "$code" "compare with the previous night"
else
  probegate report "$OUT/nightly" --markdown > "$OUT/nightly-summary.md" || true
  log "no previous night in $OUT/previous: compare starts with the next run"
fi

step "pre-release gate: --profile gate against the candidate"
code=0
probegate run --profile gate --target "$TARGET" --image "$APP_IMAGE=$CANDIDATE" --out "$OUT/gate" || code=$?
flag "$code" "gate"
probegate report "$OUT/gate" --markdown > "$OUT/gate-summary.md" || true
# Not a workflow step: how long the gate took to its verdicts (FIGURE time-to-verdict-gate).
go run ./hack/gatefig "$OUT/gate" || true

step "artifacts (the workflow uploads these)"
for f in "$OUT"/nightly/report.html "$OUT"/nightly/junit.xml "$OUT"/gate/report.html "$OUT"/gate/junit.xml "$OUT"/*-summary.md; do
  if [ -f "$f" ]; then log "  $f"; fi
done
exit "$failed"
