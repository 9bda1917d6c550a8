#!/usr/bin/env bash
# Builds a Debian rootfs with debootstrap, cached by package list: build-rootfs.sh NAME PACKAGES...
# Output: $PROBEGATE_CACHE/rootfs/NAME.tar (a tarball ready for `docker import`).
source "$(dirname "$0")/lib/common.sh"
need_root "debootstrap"

name=$1; shift
build_lock "rootfs-$name"
pkgs=$(printf '%s\n' "$@" | sort -u | paste -sd, -)
out="$PROBEGATE_CACHE/rootfs/$name.tar"
# The key covers what goes into the tarball; bump ROOTFS_RECIPE when the slimming below changes.
ROOTFS_RECIPE=1
key=$(printf '%s %s recipe %s\n' "$DEBIAN_SUITE" "$pkgs" "$ROOTFS_RECIPE" | sha256sum | cut -c1-12)
if stamp_ok "rootfs-$name" "$key" && [ -f "$out" ]; then
  log "rootfs $name cached ($out)"
  exit 0
fi
command -v debootstrap >/dev/null || { log "installing debootstrap"; apt-get install -y -qq debootstrap >/dev/null; } \
  || die "debootstrap is missing and could not be installed"

# The Debian mirror apt already uses (deb822 .sources or classic lines), never the security archive.
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
  | awk '/^URIs:/ {print $2} /^deb / && $2 !~ /^\[/ {print $2}' | grep '/debian/\?$' | grep -v security | head -n1 || true)
[ -n "$mirror" ] || die "no Debian mirror configured in apt sources"
mkdir -p "$PROBEGATE_CACHE/rootfs"
dir=$(mktemp -d "$PROBEGATE_CACHE/rootfs/.$name.XXXX")
trap 'rm -rf "$dir"' EXIT
log "debootstrap $DEBIAN_SUITE rootfs '$name' (several minutes): $pkgs"
debootstrap --variant=minbase --include="$pkgs" "$DEBIAN_SUITE" "$dir" "$mirror" >"$dir.log" 2>&1 \
  || { tail -20 "$dir.log" >&2; die "debootstrap of rootfs $name failed (log: $dir.log)"; }
# Slim: no docs, man pages, locales or apt lists in images.
rm -rf "$dir"/usr/share/{doc,man,info,locale}/* "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin
tar -C "$dir" --numeric-owner -cf "$out.tmp" . && mv "$out.tmp" "$out"
rm -f "$dir.log"
stamp_set "rootfs-$name" "$key"
log "rootfs $name ready: $(du -h "$out" | cut -f1)"
