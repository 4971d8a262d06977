#!/usr/bin/env bash
# Builds the real Kubernetes binaries the tests use (kube-apiserver, kube-controller-manager,
# kubectl, etcd, helm, and Prometheus's promtool, which evaluates the chart's alerts; kubelet on
# request) from the Go module proxy only, into a cache
# outside the repository, and reuses that cache when it is complete.
#
#   src/local-cluster/build.sh            # prints the bin directory on its last line
#   KUBE_ASSETS=/dir src/local-cluster/build.sh   # use installed binaries, build nothing
#   WITH_KUBELET=1 src/local-cluster/build.sh     # also build the kubelet, kube-scheduler and an
#                                                 # OCI registry (distribution's): the one-node
#                                                 # real cluster (real-node.ts) and the release
#                                                 # installed from a registry
#
#   WITH_OLDEST=1 src/local-cluster/build.sh      # also kube-apiserver-oldest: the oldest
#                                                 # Kubernetes the chart supports (Chart.yaml
#                                                 # kubeVersion), where a test installs the CRDs
#
# Why a module of our own: k8s.io/kubernetes maps its staging modules with replace
# directives, which `go install pkg@version` refuses; a main module that replaces each staging
# module with its published v0.Y.Z builds fine (golang/go#44840: `go install` refuses replace
# directives; used as a dependency, k8s.io/kubernetes's replaces are ignored and its staging
# modules' v0.0.0 cannot be resolved, kubernetes/kubernetes#79384).
set -euo pipefail

K8S=1.34.3
# The oldest Kubernetes the chart claims (helm/linode-operator/Chart.yaml kubeVersion).
OLDEST_K8S=1.31.14
ETCD=v3.6.4
HELM=v3.19.5
REGISTRY=v3.1.2
# Prometheus 3.x (its Go module is versioned v0.3xx).
PROMETHEUS=v0.316.0
MINOR=$(cut -d. -f2 <<<"$K8S")
STG="v0.${K8S#1.}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

want=(kube-apiserver kube-controller-manager kubectl etcd helm promtool)
[ "${WITH_KUBELET:-}" = 1 ] && want+=(kubelet kube-scheduler registry)
[ "${WITH_OLDEST:-}" = 1 ] && want+=(kube-apiserver-oldest)

if [ -n "${KUBE_ASSETS:-}" ]; then
  for b in "${want[@]}"; do
    [ -x "$KUBE_ASSETS/$b" ] || { echo "KUBE_ASSETS=$KUBE_ASSETS has no executable $b" >&2; exit 1; }
  done
  echo "$KUBE_ASSETS"; exit 0
fi

CACHE="${LINODE_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/linode-operator}"
OUT="$CACHE/k8s-v$K8S/bin"
mkdir -p "$OUT"

missing() { for b in "${want[@]}"; do [ -x "$OUT/$b" ] || echo "$b"; done; }
if [ -z "$(missing)" ]; then echo "$OUT"; exit 0; fi

command -v go >/dev/null || { echo "Go is needed to build the control plane (or set KUBE_ASSETS)" >&2; exit 1; }

# One build at a time, even when several test runs start together.
exec 9>"$CACHE/build.lock"
flock 9
if [ -z "$(missing)" ]; then echo "$OUT"; exit 0; fi

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
log() { printf '[control-plane] %s\n' "$*" >&2; }
start=$(date +%s)

LDF="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDF+=" -X $p.gitVersion=v$K8S -X $p.gitMajor=1 -X $p.gitMinor=$MINOR -X $p.gitTreeState=clean"
  LDF+=" -X $p.buildDate=2025-12-09T00:00:00Z"
done

k8s_bins=()
for b in kube-apiserver kube-controller-manager kubectl kubelet kube-scheduler; do
  [[ " $(missing | tr '\n' ' ') " == *" $b "* ]] && k8s_bins+=("$b")
done
if [ ${#k8s_bins[@]} -gt 0 ]; then
  W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
  cp "$HERE/k8s/go.mod" "$HERE/k8s/go.sum" "$W/" 2>/dev/null || cp "$HERE/k8s/go.mod" "$W/"
  cd "$W"
  go get "k8s.io/kubernetes@v$K8S" >&2
  # The committed go.mod pins every staging module; check the list against the one the proxy serves.
  GOMOD=$(go mod download -json "k8s.io/kubernetes@v$K8S" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  diff <(sed -n 's#^[[:space:]]*k8s.io/\([a-z0-9-]*\) => \./staging/.*#\1#p' "$GOMOD" | sort) \
       <(sed -n "s#^[[:space:]]*k8s.io/\([a-z0-9-]*\) => k8s.io/[a-z0-9-]* $STG\$#\1#p" go.mod | sort) \
    || { log "staging module list differs from k8s.io/kubernetes v$K8S"; exit 1; }
  for c in "${k8s_bins[@]}"; do   # one at a time keeps peak memory under 2 GB
    log "building $c v$K8S"
    go build -trimpath -ldflags "$LDF" -o "$OUT/$c.tmp" "k8s.io/kubernetes/cmd/$c"
    mv "$OUT/$c.tmp" "$OUT/$c"
  done
  cd "$HERE"
fi

if [ "${WITH_OLDEST:-}" = 1 ] && [ ! -x "$OUT/kube-apiserver-oldest" ]; then
  # From its own pinned module (k8s-oldest/go.mod and go.sum, the same recipe as ../k8s): the
  # checksums are committed, so nothing needs the checksum database at build time.
  log "building kube-apiserver v$OLDEST_K8S (the oldest supported)"
  O=$(mktemp -d)
  cp "$HERE/k8s-oldest/go.mod" "$HERE/k8s-oldest/go.sum" "$O/"
  OLD_MINOR=$(cut -d. -f2 <<<"$OLDEST_K8S")
  OLD_LDF="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    OLD_LDF+=" -X $p.gitVersion=v$OLDEST_K8S -X $p.gitMajor=1 -X $p.gitMinor=$OLD_MINOR -X $p.gitTreeState=clean"
  done
  ( cd "$O" && go build -trimpath -ldflags "$OLD_LDF" -o "$OUT/kube-apiserver-oldest.tmp" k8s.io/kubernetes/cmd/kube-apiserver )
  rm -rf "$O"; mv "$OUT/kube-apiserver-oldest.tmp" "$OUT/kube-apiserver-oldest"
fi

if [ ! -x "$OUT/etcd" ]; then
  log "building etcd $ETCD"
  E=$(mktemp -d)
  ( cd "$E" && go mod init example.local/etcdbin >/dev/null 2>&1 \
    && go get "go.etcd.io/etcd/server/v3@$ETCD" >/dev/null 2>&1 \
    && go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3 )
  rm -rf "$E"; mv "$OUT/etcd.tmp" "$OUT/etcd"
fi

if [ ! -x "$OUT/helm" ]; then
  log "building helm $HELM"
  H=helm.sh/helm/v3
  T=$(mktemp -d)
  GOFLAGS= GOBIN="$T" go install -trimpath -ldflags "-s -w -X $H/internal/version.version=$HELM \
    -X $H/pkg/chartutil.k8sVersionMajor=1 -X $H/pkg/chartutil.k8sVersionMinor=$MINOR \
    -X $H/pkg/lint/rules.k8sVersionMajor=1 -X $H/pkg/lint/rules.k8sVersionMinor=$MINOR" "$H/cmd/helm@$HELM"
  mv "$T/helm" "$OUT/helm"; rm -rf "$T"
fi

if [ ! -x "$OUT/promtool" ]; then
  log "building promtool (Prometheus module $PROMETHEUS)"
  T=$(mktemp -d)
  GOFLAGS= GOBIN="$T" go install -trimpath -ldflags "-s -w" "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS"
  mv "$T/promtool" "$OUT/promtool"; rm -rf "$T"
fi

if [ "${WITH_KUBELET:-}" = 1 ] && [ ! -x "$OUT/registry" ]; then
  log "building the OCI registry (distribution) $REGISTRY"
  T=$(mktemp -d)
  GOFLAGS= GOBIN="$T" go install -trimpath -ldflags "-s -w" "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY"
  mv "$T/registry" "$OUT/registry"; rm -rf "$T"
fi

log "built in $(( $(date +%s) - start )) s into $OUT"
echo "$OUT"
