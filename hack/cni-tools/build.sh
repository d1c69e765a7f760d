#!/usr/bin/env bash
# Builds the CNI reference tools the end-to-end tests drive kipam with: cnitool (the reference
# CNI client) and the bridge plugin (which delegates IPAM to kipam), plus loopback and host-local,
# which the real node's container runtime needs (loopback for every pod, host-local for a first pod
# before kipam is installed), and macvlan (the sample Multus network's plugin), from Go modules at the pinned
# versions below, into ${KIPAM_TOOLS_DIR:-$HOME/.cache/kipam}/cni-tools/<versions>/. Reused when
# present. The last line printed is the directory.
set -euo pipefail

CNI_VERSION=v1.3.1       # github.com/containernetworking/cni (cnitool, with gc and status)
PLUGINS_VERSION=v1.9.1   # github.com/containernetworking/plugins (bridge, loopback, host-local, macvlan)

dir="${KIPAM_TOOLS_DIR:-$HOME/.cache/kipam}/cni-tools/cni-${CNI_VERSION}-plugins-${PLUGINS_VERSION}"
plugins=(bridge loopback host-local macvlan)
complete() {
  [ -x "$dir/cnitool" ] || return 1
  for p in "${plugins[@]}"; do [ -x "$dir/$p" ] || return 1; done
}
if complete; then
  echo "CNI tools: reusing cnitool ${CNI_VERSION} and plugins ${PLUGINS_VERSION}" >&2
  echo "$dir"
  exit 0
fi
command -v go >/dev/null || { echo "cni-tools/build.sh: Go is needed to build cnitool and the CNI plugins; install Go 1.21 or newer" >&2; exit 1; }
mkdir -p "$dir"
echo "CNI tools: building cnitool ${CNI_VERSION} and plugins ${PLUGINS_VERSION} (${plugins[*]}) from Go modules" >&2
GOBIN="$dir" CGO_ENABLED=0 go install "github.com/containernetworking/cni/cnitool@${CNI_VERSION}" >&2
GOBIN="$dir" CGO_ENABLED=0 go install \
  "github.com/containernetworking/plugins/plugins/main/bridge@${PLUGINS_VERSION}" \
  "github.com/containernetworking/plugins/plugins/main/loopback@${PLUGINS_VERSION}" \
  "github.com/containernetworking/plugins/plugins/ipam/host-local@${PLUGINS_VERSION}" \
  "github.com/containernetworking/plugins/plugins/main/macvlan@${PLUGINS_VERSION}" >&2
echo "$dir"
