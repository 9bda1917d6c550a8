#!/usr/bin/env bash
# Prepares this host for kind, idempotently:
#   1. installs docker.io when docker's engine is missing;
#   2. on hosts whose capability bounding set lacks CAP_SYS_RESOURCE (where `docker run --privileged`
#      fails), registers hack/runc-shim as Docker's default runtime — only there;
#   3. fences Docker: traffic from any docker bridge may only go to another docker bridge;
#   4. starts dockerd when it is not running (there is no systemd on these hosts);
#   5. pre-creates an IPv4-only `kind` network (so dockerd does not turn on IPv6 forwarding).
# Safe to run repeatedly; prints what it changed.
# In probegate's container image (PROBEGATE_IN_CONTAINER=1, hack/probegate-image.sh) Docker is the
# host's, reached through its mounted socket: docker, its runtime and the fence are prepared by this
# script run on the host, and the host's iptables cannot be read from the container. There it only
# checks that the host's docker answers and was prepared (its kind network exists), and changes nothing.
# Usage: hack/host-prep.sh (as root, on the host).
source "$(dirname "$0")/lib/common.sh"
if [ "${PROBEGATE_IN_CONTAINER:-}" = 1 ]; then
  timeout 10 docker info >/dev/null 2>&1 \
    || die "in a container: the host's docker does not answer: mount its socket (-v /var/run/docker.sock:/var/run/docker.sock)"
  docker network inspect kind >/dev/null 2>&1 \
    || die "in a container: the host's docker has no 'kind' network: prepare the host first (hack/host-prep.sh or make host, on the host)"
  log "in a container: using the host's docker $(docker version --format '{{.Server.Version}}'); its fence and runtime are the host's (hack/host-prep.sh)"
  exit 0
fi
need_root "host preparation"
build_lock host-prep

DOCKER_LOG="${DOCKER_LOG:-/var/log/probegate-dockerd.log}"
KIND_SUBNET="${KIND_SUBNET:-172.29.0.0/16}"
SHIM=/usr/local/libexec/probegate/runc-shim

# 1. docker engine
if ! command -v dockerd >/dev/null 2>&1; then
  log "installing docker.io (Debian package)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io; } >/tmp/probegate-apt.log 2>&1 \
    || die "docker is not installed and 'apt-get install docker.io' failed (see /tmp/probegate-apt.log)"
fi
for tool in iptables debootstrap; do
  command -v "$tool" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$tool" >/dev/null 2>&1 \
    || die "$tool is missing and could not be installed"
done

# 2. runtime workaround, only where --privileged cannot work.
capbnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
needs_shim=false
(( (16#$capbnd >> 24) & 1 )) || needs_shim=true
want_runtime=runc
if $needs_shim; then
  want_runtime=probegate-runc
  mkdir -p "$(dirname "$SHIM")"
  tmp=$(mktemp)
  (cd "$REPO_ROOT" && go build -trimpath -buildvcs=false -o "$tmp" ./hack/runc-shim) || die "building hack/runc-shim failed"
  if ! cmp -s "$tmp" "$SHIM"; then install -m 0755 "$tmp" "$SHIM"; log "installed $SHIM (host lacks CAP_SYS_RESOURCE)"; fi
  rm -f "$tmp"
  mkdir -p /etc/docker
  want=$(printf '{\n  "runtimes": {"probegate-runc": {"path": "%s"}},\n  "default-runtime": "probegate-runc"\n}\n' "$SHIM")
  if [ ! -f /etc/docker/daemon.json ] || [ "$(cat /etc/docker/daemon.json)" != "$want" ]; then
    [ -f /etc/docker/daemon.json ] && cp /etc/docker/daemon.json /etc/docker/daemon.json.probegate-backup
    printf '%s' "$want" >/etc/docker/daemon.json
    log "registered probegate-runc as Docker's default runtime in /etc/docker/daemon.json"
  fi
fi

# 3. The Docker fence (before dockerd starts, so no container ever runs unfenced): forwarded traffic from a docker bridge must stay on a docker bridge.
# Published 127.0.0.1 ports keep working: that traffic enters from the host, not from a bridge.
ipt() { iptables -w 5 "$@"; }
ipt -N PROBEGATE-FENCE 2>/dev/null && log "created iptables chain PROBEGATE-FENCE" || true
fence_rules=("-o docker0 -j RETURN" "-o br-+ -j RETURN" "-j REJECT --reject-with icmp-admin-prohibited")
current=$(ipt -S PROBEGATE-FENCE | tail -n +2)
expected=$(for r in "${fence_rules[@]}"; do echo "-A PROBEGATE-FENCE $r"; done)
if [ "$current" != "$expected" ]; then
  ipt -F PROBEGATE-FENCE
  for r in "${fence_rules[@]}"; do ipt -A PROBEGATE-FENCE $r; done
  log "programmed PROBEGATE-FENCE"
fi
ipt -N DOCKER-USER 2>/dev/null || true
ipt -C FORWARD -j DOCKER-USER 2>/dev/null || ipt -I FORWARD 1 -j DOCKER-USER
for in_if in docker0 br-+; do
  ipt -C DOCKER-USER -i "$in_if" -j PROBEGATE-FENCE 2>/dev/null || { ipt -I DOCKER-USER 1 -i "$in_if" -j PROBEGATE-FENCE; log "fenced $in_if in DOCKER-USER"; }
done

# 4. dockerd
docker_up() { timeout 10 docker info >/dev/null 2>&1; }
if docker_up && [ "$(docker info --format '{{.DefaultRuntime}}' 2>/dev/null)" != "$want_runtime" ]; then
  log "restarting dockerd to pick up runtime $want_runtime"
  pkill -x dockerd || true
  for _ in $(seq 30); do pgrep -x dockerd >/dev/null || break; sleep 1; done
fi
if ! docker_up; then
  log "starting dockerd (log: $DOCKER_LOG)"
  pgrep -x containerd >/dev/null || true
  daemonize dockerd >>"$DOCKER_LOG" 2>&1
  for _ in $(seq 60); do docker_up && break; sleep 1; done
  docker_up || { tail -5 "$DOCKER_LOG" >&2; die "dockerd did not start within 60s (log: $DOCKER_LOG)"; }
fi

# 5. IPv4-only kind network.
if ! docker network inspect kind >/dev/null 2>&1; then
  docker network create --driver bridge --subnet "$KIND_SUBNET" \
    -o com.docker.network.bridge.enable_ip_masquerade=true -o com.docker.network.driver.mtu=1500 kind >/dev/null \
    || die "could not create the docker network 'kind'"
  log "created IPv4-only docker network kind ($KIND_SUBNET)"
fi
log "host ready: docker $(docker version --format '{{.Server.Version}}'), runtime $want_runtime, fence on"
