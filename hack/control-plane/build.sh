#!/usr/bin/env bash
# Builds the test control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl) and the real-node tier's kubelet from Go modules, at the versions pinned in go.mod next to this script, into
# kube-api-test's layout:
#
#   ${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}/k8s/<version>-linux-<arch>/
#
# Binaries already there are reused. The last line printed is always the binary directory, so
# callers (the JUnit support, the quickstart) can take it with `tail -n 1`.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet)

fail() {
  echo "build.sh: $*" >&2
  exit 1
}

version=$(sed -n 's/^\tk8s.io\/kubernetes \(v[^ ]*\)$/\1/p' "$here/go.mod")
[ -n "$version" ] || fail "no k8s.io/kubernetes requirement in $here/go.mod; regenerate it with bump.sh"
etcd_version=$(sed -n 's/^\tgo.etcd.io\/etcd\/server\/v3 \(v[^ ]*\)$/\1/p' "$here/go.mod")
case $(uname -m) in
  x86_64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "no control-plane build for machine type $(uname -m)" ;;
esac
root=${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}
dir="$root/k8s/${version#v}-linux-$arch"

complete() {
  for b in "${binaries[@]}"; do [ -x "$dir/$b" ] || return 1; done
}

mkdir -p "$root/k8s"
# Two test JVMs (or a test and the quickstart) may ask at once: one builds, the other waits.
exec 9>"$root/k8s/.kipam-build.lock"
flock 9

if complete; then
  echo "Control plane ${version} (etcd ${etcd_version}): reusing binaries built earlier" >&2
  echo "$dir"
  exit 0
fi

command -v go >/dev/null || fail "Go is not installed, and it is needed once to build the test control plane.
  Install Go 1.21 or newer (an older Go than go.mod asks for fetches the right toolchain itself
  through the Go module proxy), then rerun."

start=$(date +%s)
echo "Control plane ${version} (etcd ${etcd_version}): building from Go modules into $dir" >&2
echo "  (the first build downloads the modules and compiles Kubernetes; expect 10-30 minutes on 2 cores)" >&2
work=$(mktemp -d "$root/k8s/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
log="$work/build.log"

pkg=k8s.io/component-base/version
minor=${version#v*.}
minor=${minor%%.*}
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
ldflags="$ldflags -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"

if ! (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$work/" \
      ./etcd \
      k8s.io/kubernetes/cmd/kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler \
      k8s.io/kubernetes/cmd/kubectl \
      k8s.io/kubernetes/cmd/kubelet) >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  fail "building the control plane failed (output above). Check that the Go module proxy is
  reachable (go env GOPROXY) and that Go is 1.26 or newer (go version), then rerun. The versions
  are pinned in $here/go.mod."
fi

mkdir -p "$dir"
for b in "${binaries[@]}"; do mv -f "$work/$b" "$dir/$b"; done
echo "Control plane ${version}: built in $(( $(date +%s) - start ))s" >&2
echo "$dir"
