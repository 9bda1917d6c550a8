#!/usr/bin/env bash
# Shared helpers for probegate's build and host scripts. Source it; do not run it.
set -euo pipefail

# Versions pinned for the offline node image. Changing one invalidates the caches keyed on it.
KUBE_VERSION="${KUBE_VERSION:-v1.34.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.5}"
ETCD_IMAGE_TAG="${ETCD_IMAGE_TAG:-3.6.5-0}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.12.1}"
KIND_VERSION="${KIND_VERSION:-v0.33.0}"
TOXIPROXY_VERSION="${TOXIPROXY_VERSION:-v2.12.0}"
# Traefik v3.6.12: v3.7.x's module graph needs 15 module versions the Go module proxy here refuses
# (a fork of go-http-auth and 14 SDKs of lego's ACME DNS providers); v3.6.12's are all served.
TRAEFIK_VERSION="${TRAEFIK_VERSION:-v3.6.12}"
DEBIAN_SUITE="${DEBIAN_SUITE:-bookworm}"

# Everything expensive is cached here, outside the work tree, so a fresh clone on a warm machine reuses it.
PROBEGATE_CACHE="${PROBEGATE_CACHE:-/var/cache/probegate}"
HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPO_ROOT="$(cd "$HACK_DIR/.." && pwd)"

log() { printf '%s probegate: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'probegate: %s\n' "$*" >&2; exit 1; }

# content_hash FILE... prints a short hash of the named files' contents and of the pinned versions.
content_hash() {
  { printf '%s\n' "$KUBE_VERSION" "$ETCD_VERSION" "$COREDNS_VERSION" "$DEBIAN_SUITE"; cat "$@"; } | sha256sum | cut -c1-12
}

# stamp_ok NAME KEY succeeds when the cached build NAME was made from inputs hashing to KEY.
stamp_ok() { [ -f "$PROBEGATE_CACHE/stamps/$1" ] && [ "$(cat "$PROBEGATE_CACHE/stamps/$1")" = "$2" ]; }
stamp_set() { mkdir -p "$PROBEGATE_CACHE/stamps"; printf '%s\n' "$2" >"$PROBEGATE_CACHE/stamps/$1"; }

need_root() { [ "$(id -u)" = 0 ] || die "$1 needs root"; }

# go_env prints the environment every offline Go build here shares.
export CGO_ENABLED=0

# build_lock NAME holds an exclusive lock on NAME for the rest of the calling script, waiting while
# another process (a parallel test package, a second terminal) builds the same thing.
build_lock() {
  mkdir -p "$PROBEGATE_CACHE/locks"
  exec {BUILD_LOCK_FD}>"$PROBEGATE_CACHE/locks/$1.lock"
  if ! flock -n "$BUILD_LOCK_FD"; then
    log "waiting for another $1 build to finish (lock: $PROBEGATE_CACHE/locks/$1.lock)"
    flock -w "${PROBEGATE_LOCK_WAIT:-3600}" "$BUILD_LOCK_FD" \
      || die "gave up after ${PROBEGATE_LOCK_WAIT:-3600}s waiting for the $1 lock; holders: $(fuser "$PROBEGATE_CACHE/locks/$1.lock" 2>&1 | tr -s ' ')"
  fi
}

# daemonize CMD... starts a long-lived process with the build lock's descriptor closed, so the daemon does
# not hold the lock for the rest of its life (a dockerd that inherits it blocks every later build_lock).
daemonize() {
  if [ -n "${BUILD_LOCK_FD:-}" ]; then
    nohup "$@" {BUILD_LOCK_FD}>&- </dev/null &
  else
    nohup "$@" </dev/null &
  fi
}
