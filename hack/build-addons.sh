#!/usr/bin/env bash
# Builds the cluster add-on binaries kubeadm's images need besides Kubernetes itself — etcd, CoreDNS —
# from their Go modules through small wrapper modules, plus probegate's own pause binary.
# Output: $PROBEGATE_CACHE/addons/bin/{etcd,etcdctl,coredns,pause}.
source "$(dirname "$0")/lib/common.sh"

build_lock addons
# Bump when the go build below changes: every add-on is rebuilt.
ADDON_RECIPE=1
out="$PROBEGATE_CACHE/addons"
mkdir -p "$out/bin"

# build_tool NAME MODULE VERSION PACKAGE: go build PACKAGE (a main package of MODULE@VERSION).
build_tool() {
  local name=$1 module=$2 version=$3 pkg=$4
  local key; key=$(printf '%s %s %s recipe %s\n' "$module" "$version" "$pkg" "$ADDON_RECIPE" | sha256sum | cut -c1-12)
  if stamp_ok "addon-$name" "$key" && [ -x "$out/bin/$name" ]; then log "$name $version cached"; return; fi
  local mod="$out/mod-$name"
  rm -rf "$mod" && mkdir -p "$mod"
  printf 'module probegate.local/%sbuild\n\ngo 1.24\n' "$name" >"$mod/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$pkg" >"$mod/tools.go"
  log "building $name $version from $module"
  (cd "$mod" && GOFLAGS=-mod=mod go get "$module@$version" >/dev/null 2>&1 && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 \
    && go build -trimpath -ldflags "-s -w" -o "$out/bin/$name" "$pkg") || die "building $name $version failed"
  stamp_set "addon-$name" "$key"
}

build_tool etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3
build_tool coredns github.com/coredns/coredns "$COREDNS_VERSION" github.com/coredns/coredns
key=$(content_hash "$HACK_DIR/pause/main.go")
if ! stamp_ok addon-pause "$key" || [ ! -x "$out/bin/pause" ]; then
  (cd "$REPO_ROOT" && go build -trimpath -ldflags "-s -w" -o "$out/bin/pause" ./hack/pause) || die "building pause failed"
  stamp_set addon-pause "$key"
fi
log "add-on binaries ready in $out/bin"
