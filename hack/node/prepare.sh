#!/bin/bash
# Runs once inside the node image while it is being built (under `sleep`, not systemd): trims
# autostart, enables the node's services and preloads the component images into containerd.
set -o errexit -o nounset -o pipefail

# Units a kind node does not need, or that would touch the host (sysctl, binfmt, kernel modules).
systemctl mask --quiet getty.target console-getty.service getty@.service systemd-logind.service \
  systemd-binfmt.service proc-sys-fs-binfmt_misc.automount systemd-modules-load.service \
  kmod-static-nodes.service systemd-sysctl.service timers.target systemd-tmpfiles-clean.timer \
  apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer dpkg-db-backup.timer \
  systemd-firstboot.service systemd-networkd.service systemd-resolved.service 2>/dev/null || true
systemctl enable --quiet containerd.service kubelet.service
# Host-global sysctl keys must never be written from a node.
rm -f /usr/lib/sysctl.d/* /etc/sysctl.d/* /etc/sysctl.conf
rm -f /etc/machine-id /var/lib/dbus/machine-id
# No pod network config in the image: probegate writes each node's own (its spec.podCIDR) once the
# node has registered (internal/cluster/podnet.go); until then the node stays NotReady.
rm -rf /etc/cni/net.d
mkdir -p /etc/cni/net.d

# Preload images: the CRI plugin unpacks them on first use.
containerd >/tmp/containerd.log 2>&1 &
for _ in $(seq 60); do ctr version >/dev/null 2>&1 && break; sleep 0.5; done
for tar in /images/*.tar; do
  ctr -n k8s.io images import --no-unpack --digests "$tar" >/dev/null
done
ctr -n k8s.io images ls -q
kill %1
wait || true
rm -f /tmp/containerd.log
