#!/usr/bin/env bash
# Builds probegate's kind node image with no registry and prints its name on stdout.
#   - Kubernetes binaries from the k8s.io/kubernetes Go module (build-kube.sh)
#   - etcd, CoreDNS and pause from Go modules (build-addons.sh)
#   - a Debian rootfs with systemd, containerd, runc, CNI plugins and iptables (build-rootfs.sh)
#   - control-plane images with exactly the names kubeadm expects, preloaded into the node's containerd
# Cached by content: when the image for these inputs exists, nothing is rebuilt.
# KIND_NODE_IMAGE=kindest/node:... skips the build entirely (for hosts with registry access).
source "$(dirname "$0")/lib/common.sh"

if [ -n "${KIND_NODE_IMAGE:-}" ]; then
  log "using KIND_NODE_IMAGE=$KIND_NODE_IMAGE (no build)"
  echo "$KIND_NODE_IMAGE"
  exit 0
fi
need_root "building the node image"
build_lock node-image

NODE_PKGS=(systemd systemd-sysv dbus containerd runc iptables nftables conntrack containernetworking-plugins
  iproute2 util-linux mount kmod procps ca-certificates ethtool socat libseccomp2 bash)
PROXY_PKGS=(iptables nftables conntrack kmod)
PAUSE_TAG=3.10.1

key=$( (printf '%s\n' "${NODE_PKGS[@]}" "${PROXY_PKGS[@]}" "$PAUSE_TAG" "$ETCD_IMAGE_TAG";
  cd "$HACK_DIR" && tar --sort=name --mtime=@0 --owner=0 --group=0 -cf - node node-image.sh build-kube.sh \
    build-addons.sh build-rootfs.sh pause lib) | content_hash /dev/stdin)
image="probegate/node:$KUBE_VERSION-$key"
if docker image inspect "$image" >/dev/null 2>&1; then
  log "node image $image cached"
  echo "$image"
  exit 0
fi

start=$(date +%s)
"$HACK_DIR/host-prep.sh" >&2
"$HACK_DIR/build-kube.sh" >&2
"$HACK_DIR/build-addons.sh" >&2
"$HACK_DIR/build-rootfs.sh" node "${NODE_PKGS[@]}" >&2
"$HACK_DIR/build-rootfs.sh" kube-proxy "${PROXY_PKGS[@]}" >&2

kbin="$PROBEGATE_CACHE/kube/$KUBE_VERSION/bin"
abin="$PROBEGATE_CACHE/addons/bin"
work=$(mktemp -d)
builder="probegate-node-build-$$"
trap 'docker rm -f "$builder" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$work/images"

# A minimal rootfs for static binaries: users, nsswitch, a sticky /tmp.
minimal_rootfs() {
  local d=$1
  mkdir -p "$d/etc" "$d/tmp" "$d/usr/local/bin"
  chmod 1777 "$d/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"$d/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$d/etc/group"
  printf 'hosts: files dns\n' >"$d/etc/nsswitch.conf"
}

# static_image NAME ENTRYPOINT BIN...: a FROM scratch image holding BINs in /usr/local/bin (or /).
static_image() {
  local name=$1 entry=$2; shift 2
  local ctx="$work/ctx-$(echo "$name" | tr '/:' '__')"
  minimal_rootfs "$ctx/rootfs"
  local dest="$ctx/rootfs/usr/local/bin"
  [ -n "$entry" ] && dest="$ctx/rootfs"
  cp "$@" "$dest/"
  {
    echo "FROM scratch"
    echo "COPY rootfs/ /"
    echo "ENV PATH=/usr/local/bin:/usr/bin:/bin"
    [ -n "$entry" ] && echo "ENTRYPOINT [\"$entry\"]"
  } >"$ctx/Dockerfile"
  docker build -q -t "$name" "$ctx" >/dev/null || die "building image $name failed"
  docker save -o "$work/images/$(echo "$name" | tr '/:' '__').tar" "$name"
}

log "building component images"
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  static_image "registry.k8s.io/$c:$KUBE_VERSION" "" "$kbin/$c"
done
static_image "registry.k8s.io/etcd:$ETCD_IMAGE_TAG" "" "$abin/etcd"
static_image "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" "/coredns" "$abin/coredns"
static_image "registry.k8s.io/pause:$PAUSE_TAG" "/pause" "$abin/pause"
# kube-proxy needs iptables/nft and conntrack: a small Debian rootfs.
docker import "$PROBEGATE_CACHE/rootfs/kube-proxy.tar" "probegate/kube-proxy-base:$key" >/dev/null
mkdir -p "$work/ctx-proxy" && cp "$kbin/kube-proxy" "$work/ctx-proxy/"
printf 'FROM probegate/kube-proxy-base:%s\nCOPY kube-proxy /usr/local/bin/kube-proxy\nENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n' "$key" \
  >"$work/ctx-proxy/Dockerfile"
docker build -q -t "registry.k8s.io/kube-proxy:$KUBE_VERSION" "$work/ctx-proxy" >/dev/null || die "building kube-proxy image failed"
docker save -o "$work/images/kube-proxy.tar" "registry.k8s.io/kube-proxy:$KUBE_VERSION"
docker rmi "probegate/kube-proxy-base:$key" >/dev/null 2>&1 || true

log "assembling the node filesystem"
docker import "$PROBEGATE_CACHE/rootfs/node.tar" "probegate/node-base:$key" >/dev/null
ctx="$work/ctx-node"
mkdir -p "$ctx/files/usr/bin" "$ctx/files/kind"
cp -a "$HACK_DIR/node/files/." "$ctx/files/"
cp "$HACK_DIR/node/prepare.sh" "$ctx/files/usr/local/bin/probegate-node-prepare"
for b in kubelet kubeadm kubectl; do cp "$kbin/$b" "$ctx/files/usr/bin/$b"; done
echo "$KUBE_VERSION" >"$ctx/files/kind/version"
printf 'FROM probegate/node-base:%s\nCOPY files/ /\n' "$key" >"$ctx/Dockerfile"
docker build -q -t "probegate/node-stage:$key" "$ctx" >/dev/null || die "building the node filesystem failed"

log "preloading images into the node's containerd"
# No /var volume here: docker commit skips volumes, and the preloaded content lives in /var.
docker run -d --name "$builder" --privileged -v "$work/images:/images:ro" --entrypoint sleep \
  "probegate/node-stage:$key" infinity >/dev/null || die "starting the node build container failed"
docker exec "$builder" /usr/local/bin/probegate-node-prepare >&2 || die "preparing the node image failed"
docker exec "$builder" rm -f /usr/local/bin/probegate-node-prepare
docker stop -t 1 "$builder" >/dev/null
docker commit "$builder" "probegate/node-commit:$key" >/dev/null || die "committing the node image failed"
docker rm -f "$builder" >/dev/null

# Docker 20.10 cannot set STOPSIGNAL on commit/import: a two-line build from the committed image.
mkdir -p "$work/ctx-final"
cat >"$work/ctx-final/Dockerfile" <<DOCKERFILE
FROM probegate/node-commit:$key
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
CMD []
DOCKERFILE
docker build -q -t "$image" "$work/ctx-final" >/dev/null || die "finalising the node image failed"
docker tag "$image" "probegate/node:$KUBE_VERSION"
docker rmi "probegate/node-stage:$key" "probegate/node-base:$key" >/dev/null 2>&1 || true
# Prune node images built from older inputs (about 1 GiB each). One a container still runs is kept:
# docker refuses to remove it.
for old in $(docker image ls --format '{{.Repository}}:{{.Tag}}' probegate/node probegate/node-commit 2>/dev/null); do
  case "$old" in
    "$image" | "probegate/node:$KUBE_VERSION" | "probegate/node-commit:$key") ;;
    *) if docker rmi "$old" >/dev/null 2>&1; then log "pruned old node image $old"; fi ;;
  esac
done
size=$(docker image inspect -f '{{.Size}}' "$image")
echo "$(( $(date +%s) - start ))" >"$PROBEGATE_CACHE/node-image-build-seconds"
log "node image $image built in $(( $(date +%s) - start ))s, size $(( size / 1024 / 1024 )) MiB"
echo "$image"
