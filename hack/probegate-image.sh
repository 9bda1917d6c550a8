#!/usr/bin/env bash
# Builds probegate/probegate, probegate itself as a container image for CI jobs that run it against
# the host's Docker (socket mounted, --network host; docs/ci.md), with no pulls:
#   the static cmd/probegate and the pinned kind CLI on a slim Debian rootfs (hack/build-rootfs.sh) with
#   docker.io's client (its daemons removed) and the tools the embedded host scripts use (bash, flock...).
# Tagged :<content hash> and :dev; the hash covers every file the binary is built from (go list), this
# script, the Dockerfile, the rootfs and the kind version, and a build whose hash tag exists is skipped.
# A checkout-only script (not embedded: a run never builds it). Usage: hack/probegate-image.sh (as root).
source "$(dirname "$0")/lib/common.sh"
need_root "the probegate rootfs (debootstrap)"
docker info >/dev/null 2>&1 || die "docker is not running (run hack/host-prep.sh)"
# The classic builder: FROM a local image never reaches a registry.
export DOCKER_BUILDKIT=0
# have_image, hash_files, tag_build, skip_if_current
source "$HACK_DIR/lib/images.sh"

# slim_rootfs KEY: a copy of the probegate rootfs without docker.io's daemons (the image is a client of
# the host's Docker), downloaded .debs and locale sources.
slim_rootfs() {
  local key=$1 out="$PROBEGATE_CACHE/rootfs/probegate-slim.tar" dir
  if stamp_ok rootfs-probegate-slim "$key" && [ -f "$out" ]; then return; fi
  dir=$(mktemp -d "$PROBEGATE_CACHE/rootfs/.probegate-slim.XXXX")
  tar -C "$dir" -xf "$PROBEGATE_CACHE/rootfs/probegate.tar" || die "unpack the probegate rootfs"
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/usr/share/i18n "$dir"/usr/sbin/dockerd "$dir"/usr/sbin/docker-proxy \
    "$dir"/usr/sbin/ovrouter "$dir"/usr/bin/dnet "$dir"/usr/bin/docker-init "$dir"/usr/bin/containerd* "$dir"/usr/bin/ctr \
    "$dir"/usr/sbin/runc
  [ -x "$dir/usr/bin/docker" ] || die "the probegate rootfs has no docker client (/usr/bin/docker)"
  tar -C "$dir" --numeric-owner -cf "$out.tmp" . && mv "$out.tmp" "$out" || die "repack the probegate rootfs"
  rm -rf "$dir"
  stamp_set rootfs-probegate-slim "$key"
}

# kind_binary prints the path of the pinned kind CLI in the cache, where `probegate cluster create`
# installs it (go install, CGO_ENABLED=0), installing it there when missing or another version.
kind_binary() {
  local bin="$PROBEGATE_CACHE/bin/kind"
  if ! "$bin" version 2>/dev/null | grep -q "^kind $KIND_VERSION "; then
    log "installing kind $KIND_VERSION into $(dirname "$bin")"
    mkdir -p "$(dirname "$bin")"
    GOBIN=$(dirname "$bin") go install "sigs.k8s.io/kind@$KIND_VERSION" >&2 || die "go install kind $KIND_VERSION failed"
  fi
  printf '%s\n' "$bin"
}

# sources lists what cmd/probegate is built from: the Go and embedded files of every package of this
# module it imports, and go.mod and go.sum.
sources() {
  (cd "$REPO_ROOT" && go list -deps -f '{{if .Module}}{{if .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}
{{end}}{{end}}{{end}}' ./cmd/probegate) || die "go list ./cmd/probegate failed"
  printf '%s\n' "$REPO_ROOT/go.mod" "$REPO_ROOT/go.sum"
}

build_probegate() {
  local files kind rootfs_key hash base ctx old
  "$HACK_DIR/build-rootfs.sh" probegate docker.io || die "probegate rootfs failed"
  rootfs_key=$( { cat "$PROBEGATE_CACHE/stamps/rootfs-probegate"; declare -f slim_rootfs; } | sha256sum | cut -c1-12)
  kind=$(kind_binary)
  mapfile -t files < <(sources)
  [ ${#files[@]} -gt 2 ] || die "go list found no sources of cmd/probegate"
  hash=$( { printf '%s\n' "$rootfs_key" "$KIND_VERSION"; hash_files "${files[@]}" "$HACK_DIR/probegate-image.sh" "$HACK_DIR/probegate-image/Dockerfile"; } \
    | sha256sum | cut -c1-12)
  skip_if_current probegate "$hash" && return
  base="probegate/probegate-rootfs:$rootfs_key"
  if ! have_image "$base"; then
    slim_rootfs "$rootfs_key"
    log "importing the probegate rootfs as $base"
    docker import "$PROBEGATE_CACHE/rootfs/probegate-slim.tar" "$base" >/dev/null || die "docker import of the probegate rootfs failed"
    for old in $(docker image ls --format '{{.Repository}}:{{.Tag}}' probegate/probegate-rootfs); do
      [ "$old" = "$base" ] || docker rmi "$old" >/dev/null 2>&1 || true
    done
  fi
  ctx="$PROBEGATE_CACHE/images/probegate"
  rm -rf "$ctx" && mkdir -p "$ctx"
  # Static (common.sh exports CGO_ENABLED=0): the binary depends on nothing in the rootfs; checked below.
  (cd "$REPO_ROOT" && go build -trimpath -ldflags "-s -w" -o "$ctx/probegate" ./cmd/probegate) \
    || die "go build of probegate failed"
  go version -m "$ctx/probegate" | grep -q '^[[:space:]]*build[[:space:]]*CGO_ENABLED=0$' \
    || die "probegate was not built with CGO_ENABLED=0 (a static binary)"
  cp "$kind" "$HACK_DIR/probegate-image/Dockerfile" "$ctx/"
  tag_build probegate "$hash" "$ctx" --build-arg "ROOTFS=$base"
}

build_probegate
docker image ls --format '{{.Repository}}:{{.Tag}} {{.ID}} {{.Size}}' probegate/probegate >&2
