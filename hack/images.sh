#!/usr/bin/env bash
# Builds every image the cluster runs, each cached by the hash of its inputs, with no pulls:
#   probegate/target     FROM scratch, the static fixtures/target binary
#   probegate/toxiproxy  FROM scratch, toxiproxy's cmd/server at $TOXIPROXY_VERSION (a throwaway module)
#   probegate/postgres   Debian's postgresql-15 on an imported debootstrap rootfs
#   probegate/agent      FROM scratch, the static in-cluster agent (cmd/probegate-agent: load agent, and node
#                        agent with -node)
#   probegate/traefik    FROM scratch, Traefik's cmd/traefik at $TRAEFIK_VERSION, built in a copy of its own
#                        module (only when asked: the ingress front door). Cold: 46 min on 2 shared cores,
#                        module downloads included (18 min of CPU); warm: 1 s; the image is 178 MB
# Each image is tagged :<content hash> and :dev (the tag the manifests in fixtures/manifests use).
# A build whose hash tag already exists is skipped.
# Usage: hack/images.sh [default|target|toxiproxy|postgres|agent|traefik]... (none: default, the four above traefik)
source "$(dirname "$0")/lib/common.sh"

if [ -x "$HACK_DIR/host-prep.sh" ] && [ "$(id -u)" = 0 ]; then
  "$HACK_DIR/host-prep.sh" || die "host preparation failed"
fi
docker info >/dev/null 2>&1 || die "docker is not running (run hack/host-prep.sh)"
# The classic builder: FROM scratch and FROM a local image never reach a registry.
export DOCKER_BUILDKIT=0
IMAGES_DIR="$REPO_ROOT/fixtures/images"
mkdir -p "$PROBEGATE_CACHE/images" "$PROBEGATE_CACHE/build"

# have_image, hash_files, tag_build, skip_if_current
source "$HACK_DIR/lib/images.sh"

build_target() {
  local files hash ctx
  mapfile -t files < <(find "$REPO_ROOT/fixtures/target" -name '*.go' ! -name '*_test.go' -type f)
  hash=$(hash_files "${files[@]}" "$REPO_ROOT/go.mod" "$REPO_ROOT/go.sum" "$IMAGES_DIR/target/Dockerfile")
  skip_if_current target "$hash" && return
  ctx="$PROBEGATE_CACHE/images/target"
  rm -rf "$ctx" && mkdir -p "$ctx"
  (cd "$REPO_ROOT" && go build -trimpath -ldflags "-s -w" -o "$ctx/target" ./fixtures/target/cmd/target) \
    || die "go build of the target failed"
  cp "$IMAGES_DIR/target/Dockerfile" "$ctx/"
  tag_build target "$hash" "$ctx"
}

build_agent() {
  local files hash ctx
  mapfile -t files < <(find "$REPO_ROOT/cmd/probegate-agent" "$REPO_ROOT/loadgen" "$REPO_ROOT/internal/timeline" "$REPO_ROOT/internal/nodeagent" \
    -name '*.go' ! -name '*_test.go' -type f)
  hash=$(hash_files "${files[@]}" "$REPO_ROOT/go.mod" "$REPO_ROOT/go.sum" "$IMAGES_DIR/agent/Dockerfile")
  skip_if_current agent "$hash" && return
  ctx="$PROBEGATE_CACHE/images/agent"
  rm -rf "$ctx" && mkdir -p "$ctx"
  (cd "$REPO_ROOT" && go build -trimpath -ldflags "-s -w" -o "$ctx/probegate-agent" ./cmd/probegate-agent) \
    || die "go build of the agent failed"
  cp "$IMAGES_DIR/agent/Dockerfile" "$ctx/"
  tag_build agent "$hash" "$ctx"
}

build_toxiproxy() {
  local hash mod ctx
  hash=$( { printf '%s\n' "$TOXIPROXY_VERSION"; cat "$IMAGES_DIR/toxiproxy/Dockerfile"; } | sha256sum | cut -c1-12)
  skip_if_current toxiproxy "$hash" && return
  mod="$PROBEGATE_CACHE/build/toxiproxy-$TOXIPROXY_VERSION"
  if [ ! -x "$mod/toxiproxy-server" ]; then
    log "building toxiproxy-server $TOXIPROXY_VERSION from its Go module"
    rm -rf "$mod" && mkdir -p "$mod"
    printf 'module probegate.local/toxiproxy-server\n\ngo 1.26\n' >"$mod/go.mod"
    (cd "$mod" && GOFLAGS=-mod=mod go get "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION" \
      && go build -trimpath -ldflags "-s -w" -o toxiproxy-server.tmp github.com/Shopify/toxiproxy/v2/cmd/server \
      && mv toxiproxy-server.tmp toxiproxy-server) || die "building toxiproxy-server $TOXIPROXY_VERSION failed"
  fi
  ctx="$PROBEGATE_CACHE/images/toxiproxy"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp "$mod/toxiproxy-server" "$IMAGES_DIR/toxiproxy/Dockerfile" "$ctx/"
  tag_build toxiproxy "$hash" "$ctx"
}

# build_traefik builds cmd/traefik in a writable copy of the Traefik module, so its own go.mod and go.sum
# decide every dependency (its replace directives, forks of two dependencies, apply only to the main
# module). The binary is cached per version and Go toolchain; the source copy is removed after the build.
build_traefik() {
  local sum hash bin src ctx start json
  json=$(cd "$PROBEGATE_CACHE/build" && GOFLAGS= GOWORK=off go mod download -json "github.com/traefik/traefik/v3@$TRAEFIK_VERSION") \
    || die "go mod download github.com/traefik/traefik/v3@$TRAEFIK_VERSION failed: $json"
  sum=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",\{0,1\}$/\1/p')
  src=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [ -n "$sum" ] && [ -d "$src" ] || die "go mod download of traefik $TRAEFIK_VERSION gave no module directory"
  hash=$( { printf '%s\n' "traefik $TRAEFIK_VERSION $sum" "$(go env GOVERSION)"
    cat "$IMAGES_DIR/traefik/Dockerfile"; declare -f build_traefik; } | sha256sum | cut -c1-12)
  skip_if_current traefik "$hash" && return
  bin="$PROBEGATE_CACHE/build/traefik-$TRAEFIK_VERSION-$(go env GOVERSION)/traefik"
  if [ ! -x "$bin" ]; then
    start=$SECONDS
    log "building traefik $TRAEFIK_VERSION from its Go module (a cold build takes minutes)"
    rm -rf "$(dirname "$bin")" "$PROBEGATE_CACHE/build/traefik-src" && mkdir -p "$(dirname "$bin")"
    cp -R "$src" "$PROBEGATE_CACHE/build/traefik-src" && chmod -R u+w "$PROBEGATE_CACHE/build/traefik-src" \
      || die "copying the traefik module failed"
    (cd "$PROBEGATE_CACHE/build/traefik-src" && GOFLAGS=-mod=readonly GOWORK=off go build -trimpath \
        -ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=${TRAEFIK_VERSION#v}" \
        -o "$bin.tmp" ./cmd/traefik && mv "$bin.tmp" "$bin") || die "go build of traefik $TRAEFIK_VERSION failed"
    rm -rf "$PROBEGATE_CACHE/build/traefik-src"
    log "traefik $TRAEFIK_VERSION built in $((SECONDS - start)) s"
  fi
  ctx="$PROBEGATE_CACHE/images/traefik"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp "$bin" "$IMAGES_DIR/traefik/Dockerfile" "$ctx/"
  tag_build traefik "$hash" "$ctx"
}

# slim_postgres_rootfs KEY: a copy of the postgres rootfs without what a test database never uses
# (the LLVM JIT and its libraries, downloaded .debs, locale sources, the package's default cluster).
slim_postgres_rootfs() {
  local key=$1 out="$PROBEGATE_CACHE/rootfs/postgres-slim.tar" dir
  if stamp_ok rootfs-postgres-slim "$key" && [ -f "$out" ]; then return; fi
  dir=$(mktemp -d "$PROBEGATE_CACHE/rootfs/.postgres-slim.XXXX")
  tar -C "$dir" -xf "$PROBEGATE_CACHE/rootfs/postgres.tar" || die "unpack the postgres rootfs"
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/usr/lib/x86_64-linux-gnu/libLLVM* \
    "$dir"/usr/lib/x86_64-linux-gnu/libz3.so* "$dir"/usr/lib/postgresql/15/lib/llvmjit* \
    "$dir"/usr/lib/postgresql/15/lib/bitcode "$dir"/usr/share/i18n "$dir"/var/lib/postgresql/15 \
    "$dir"/etc/postgresql/15
  tar -C "$dir" --numeric-owner -cf "$out.tmp" . && mv "$out.tmp" "$out" || die "repack the postgres rootfs"
  rm -rf "$dir"
  stamp_set rootfs-postgres-slim "$key"
}

build_postgres() {
  local rootfs_key hash base ctx
  need_root "the postgres rootfs (debootstrap)"
  "$HACK_DIR/build-rootfs.sh" postgres postgresql-15 || die "postgres rootfs failed"
  rootfs_key=$( { cat "$PROBEGATE_CACHE/stamps/rootfs-postgres"; declare -f slim_postgres_rootfs; } | sha256sum | cut -c1-12)
  hash=$( { printf '%s\n' "$rootfs_key"; cat "$IMAGES_DIR/postgres/Dockerfile" "$IMAGES_DIR/postgres/pg-start"; } \
    | sha256sum | cut -c1-12)
  skip_if_current postgres "$hash" && return
  base="probegate/postgres-rootfs:$rootfs_key"
  if ! have_image "$base"; then
    slim_postgres_rootfs "$rootfs_key"
    log "importing the postgres rootfs as $base"
    docker import "$PROBEGATE_CACHE/rootfs/postgres-slim.tar" "$base" >/dev/null || die "docker import of the postgres rootfs failed"
    for old in $(docker image ls --format '{{.Repository}}:{{.Tag}}' probegate/postgres-rootfs); do
      [ "$old" = "$base" ] || docker rmi "$old" >/dev/null 2>&1 || true
    done
  fi
  ctx="$PROBEGATE_CACHE/images/postgres"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp "$IMAGES_DIR/postgres/Dockerfile" "$IMAGES_DIR/postgres/pg-start" "$ctx/"
  tag_build postgres "$hash" "$ctx" --build-arg "ROOTFS=$base"
}

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(default)
for image in "${wanted[@]}"; do
  case $image in
    default) build_target; build_toxiproxy; build_postgres; build_agent ;;
    target | toxiproxy | postgres | agent | traefik) "build_$image" ;;
    *) die "unknown image '$image' (want default, target, toxiproxy, postgres, agent or traefik)" ;;
  esac
done
docker image ls --format '{{.Repository}}:{{.Tag}} {{.ID}} {{.Size}}' | grep '^probegate/\(target\|toxiproxy\|postgres\|agent\|traefik\):' | sort >&2
