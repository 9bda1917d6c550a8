#!/usr/bin/env bash
# Builds the Kubernetes binaries (kubelet, kubeadm, kubectl, control-plane components, kube-proxy)
# from the k8s.io/kubernetes Go module, with no registry. Output: $PROBEGATE_CACHE/kube/$KUBE_VERSION/bin.
# k8s.io/kubernetes cannot be `go install`ed (it has replace directives), so this builds it from a
# throwaway module that requires it and replaces each staging module with its published version.
source "$(dirname "$0")/lib/common.sh"

build_lock kube
out="$PROBEGATE_CACHE/kube/$KUBE_VERSION"
cmds=(kubelet kubeadm kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy)
# The key covers the versions and the build recipe; bump KUBE_RECIPE when the go build changes.
KUBE_RECIPE=1
key=$(echo "kube recipe $KUBE_RECIPE" | content_hash /dev/stdin)
if stamp_ok "kube-$KUBE_VERSION" "$key" && [ -x "$out/bin/kubelet" ]; then
  log "kubernetes $KUBE_VERSION binaries cached in $out/bin"
  exit 0
fi

mod="$out/mod"
rm -rf "$mod" && mkdir -p "$mod" "$out/bin"
staging_minor="v0.${KUBE_VERSION#v1.}"
log "resolving k8s.io/kubernetes@$KUBE_VERSION staging modules"
gomod=$(cd "$mod" && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
[ -f "$gomod" ] || die "could not download k8s.io/kubernetes@$KUBE_VERSION from the Go module proxy"
staging=$(grep -oE 'k8s.io/[a-z0-9-]+ => \./staging' "$gomod" | awk '{print $1}' | sort -u)

{
  echo "module probegate.local/kubebuild"
  echo
  echo "go 1.24"
  echo
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  echo
  for m in $staging; do echo "replace $m => $m $staging_minor"; done
} >"$mod/go.mod"
{
  echo "//go:build tools"
  echo
  echo "package tools"
  echo
  echo "import ("
  for c in "${cmds[@]}"; do echo "	_ \"k8s.io/kubernetes/cmd/$c\""; done
  echo ")"
} >"$mod/tools.go"
(cd "$mod" && GOFLAGS=-mod=mod go mod tidy) || die "go mod tidy for the kubernetes build module failed"

pkg=k8s.io/component-base/version
major=${KUBE_VERSION#v}; major=${major%%.*}
minor=${KUBE_VERSION#v*.}; minor=${minor%%.*}
ldflags="-s -w -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
for c in "${cmds[@]}"; do
  if [ -x "$out/bin/$c" ] && [ "$out/bin/$c" -nt "$mod/go.mod" ]; then continue; fi
  log "building $c $KUBE_VERSION (the first, kubelet, takes ~20 min on 2 cores)"
  (cd "$mod" && go build -trimpath -tags tools -ldflags "$ldflags" -o "$out/bin/$c" "k8s.io/kubernetes/cmd/$c") \
    || die "building $c failed"
done
"$out/bin/kubelet" --version
stamp_set "kube-$KUBE_VERSION" "$key"
log "kubernetes binaries ready in $out/bin"
