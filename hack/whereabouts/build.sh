#!/usr/bin/env bash
# Builds whereabouts, the IPAM plugin kipam's comparison benchmark runs next to kipam, from its Go
# module at the pinned version below (the newest release the module proxy serves), into
# ${KIPAM_TOOLS_DIR:-$HOME/.cache/kipam}/whereabouts/<version>/: the plugin (whereabouts), the
# node-slice controller (whereabouts-nodeslice), its CRDs and the NetworkAttachmentDefinition CRD
# its node-slice mode reads (crds/, the latter from the module whereabouts requires). Reused when
# present. The module carries replace directives, so `go install pkg@version` refuses it: the
# module is downloaded with `go mod download` and built in a copy. The last line printed is the directory.
set -euo pipefail

VERSION=v0.9.4   # github.com/k8snetworkplumbingwg/whereabouts

dir="${KIPAM_TOOLS_DIR:-$HOME/.cache/kipam}/whereabouts/${VERSION}"
if [ -x "$dir/whereabouts" ] && [ -x "$dir/whereabouts-nodeslice" ] && [ -f "$dir/crds/networks-crd.yaml" ]; then
  echo "whereabouts: reusing ${VERSION}" >&2
  echo "$dir"
  exit 0
fi
command -v go >/dev/null || { echo "whereabouts/build.sh: Go is needed to build whereabouts; install Go 1.25 or newer" >&2; exit 1; }
echo "whereabouts: building ${VERSION} from its Go module" >&2
work="$(mktemp -d)"
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
source="$(cd "$work" && go mod download -json "github.com/k8snetworkplumbingwg/whereabouts@${VERSION}" \
  | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
[ -d "$source" ] || { echo "whereabouts/build.sh: go mod download gave no source directory" >&2; exit 1; }
cp -r "$source" "$work/src"
chmod -R u+w "$work/src"
mkdir -p "$dir.tmp/crds"
(cd "$work/src" && CGO_ENABLED=0 go build -o "$dir.tmp/whereabouts" ./cmd \
  && CGO_ENABLED=0 go build -o "$dir.tmp/whereabouts-nodeslice" ./cmd/nodeslicecontroller) >&2
cp "$work/src"/doc/crds/whereabouts.cni.cncf.io_*.yaml "$dir.tmp/crds/"
nad="$(cd "$work/src" && go list -m -json github.com/k8snetworkplumbingwg/network-attachment-definition-client \
  | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
[ -f "$nad/artifacts/networks-crd.yaml" ] || { echo "whereabouts/build.sh: no NetworkAttachmentDefinition CRD in '$nad'" >&2; exit 1; }
cp "$nad/artifacts/networks-crd.yaml" "$dir.tmp/crds/"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "$dir"
