#!/usr/bin/env bash
# Helpers shared by the image builds (hack/images.sh, hack/probegate-image.sh): content hashes and
# tags under probegate/NAME. Source it after common.sh; do not run it.

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# hash_files FILE... hashes file names and contents (order-independent of the caller).
hash_files() {
  local f
  for f in $(printf '%s\n' "$@" | sort); do printf '%s\n' "${f#"$REPO_ROOT"/}"; cat "$f"; done | sha256sum | cut -c1-12
}

# tag_build NAME HASH CONTEXT [docker build args...]: builds CONTEXT as probegate/NAME:HASH and :dev,
# then drops NAME's older hash tags (their layers go unless something else uses them).
tag_build() {
  local name=$1 hash=$2 ctx=$3 out old; shift 3
  out=$(docker build "$@" -t "probegate/$name:$hash" -t "probegate/$name:dev" "$ctx" 2>&1) \
    || { printf '%s\n' "$out" | tail -20 >&2; die "docker build of probegate/$name failed"; }
  log "built probegate/$name:$hash (also :dev)"
  for old in $(docker image ls --format '{{.Repository}}:{{.Tag}}' "probegate/$name"); do
    case $old in "probegate/$name:$hash" | "probegate/$name:dev") ;; *) docker rmi "$old" >/dev/null 2>&1 || true ;; esac
  done
}

# skip_if_current NAME HASH: re-points :dev and succeeds when probegate/NAME:HASH exists.
skip_if_current() {
  if have_image "probegate/$1:$2"; then
    docker tag "probegate/$1:$2" "probegate/$1:dev"
    log "probegate/$1:$2 is current (also :dev)"
    return 0
  fi
  return 1
}
