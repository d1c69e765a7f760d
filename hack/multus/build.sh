#!/usr/bin/env bash
# Builds Multus's thin plugin (cmd/multus), the CNI plugin the real node's container runtime calls
# to attach a pod's secondary networks from NetworkAttachmentDefinitions, and extracts the
# NetworkAttachmentDefinition CRD from the same module, at the pinned version below, into
# ${KIPAM_TOOLS_DIR:-$HOME/.cache/kipam}/multus/<version>/ (multus, nad-crd.yaml). Reused when
# present. The last line printed is the directory.
#
# The module proxy serves multus-cni.v4 only at an exact version (its version list is refused), so
# `go install pkg@version` cannot be used (it reads the list to look for a deprecation): the plugin
# is built inside a throwaway module instead.
set -euo pipefail

MULTUS_VERSION=v4.2.3   # gopkg.in/k8snetworkplumbingwg/multus-cni.v4
MODULE=gopkg.in/k8snetworkplumbingwg/multus-cni.v4

dir="${KIPAM_TOOLS_DIR:-$HOME/.cache/kipam}/multus/${MULTUS_VERSION}"
if [ -x "$dir/multus" ] && [ -s "$dir/nad-crd.yaml" ]; then
  echo "Multus: reusing the thin plugin ${MULTUS_VERSION}" >&2
  echo "$dir"
  exit 0
fi
command -v go >/dev/null || { echo "multus/build.sh: Go is needed to build Multus; install Go 1.21 or newer" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "Multus: building the thin plugin ${MULTUS_VERSION} from Go modules" >&2
(
  cd "$work"
  go mod init kipam.io/multus-build >/dev/null 2>&1
  go get "${MODULE}/cmd/multus@${MULTUS_VERSION}" >&2
  mkdir -p "$dir.partial"
  CGO_ENABLED=0 go build -o "$dir.partial/multus" "${MODULE}/cmd/multus" >&2
  source=$(go list -m -f '{{.Dir}}' "${MODULE}")
  # The daemonset manifest holds the CRD as its first document.
  awk 'BEGIN { RS = "\n---\n" } /kind: CustomResourceDefinition/ { print; exit }' \
    "$source/deployments/multus-daemonset.yml" > "$dir.partial/nad-crd.yaml"
  grep -q "network-attachment-definitions.k8s.cni.cncf.io" "$dir.partial/nad-crd.yaml" || {
    echo "multus/build.sh: no NetworkAttachmentDefinition CRD in $source/deployments/multus-daemonset.yml" >&2
    exit 1
  }
)
rm -rf "$dir"
mv "$dir.partial" "$dir"
echo "$dir"
