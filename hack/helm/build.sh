#!/usr/bin/env bash
# Builds helm, which kipam's chart tests run (lint, template, install, upgrade, uninstall), from its
# Go module at the pinned version below, into ${KIPAM_TOOLS_DIR:-$HOME/.cache/kipam}/helm/<version>/.
# Reused when present. Built in a copy of the downloaded module (as hack/whereabouts/build.sh
# does), so replace directives in its go.mod are honoured. The last line printed is the binary.
set -euo pipefail

VERSION=v3.22.0   # helm.sh/helm/v3

dir="${KIPAM_TOOLS_DIR:-$HOME/.cache/kipam}/helm/${VERSION}"
if [ -x "$dir/helm" ]; then
  echo "helm: reusing ${VERSION}" >&2
  echo "$dir/helm"
  exit 0
fi
command -v go >/dev/null || { echo "helm/build.sh: Go is needed to build helm; install Go 1.25 or newer" >&2; exit 1; }
mkdir -p "$(dirname "$dir")"
# Two test JVMs may ask at once: one builds, the other waits and reuses.
exec 9>"$(dirname "$dir")/.build.lock"
flock 9
if [ -x "$dir/helm" ]; then
  echo "$dir/helm"
  exit 0
fi
echo "helm: building ${VERSION} from its Go module (a few minutes the first time)" >&2
work="$(mktemp -d)"
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
source="$(cd "$work" && go mod download -json "helm.sh/helm/v3@${VERSION}" \
  | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
[ -d "$source" ] || { echo "helm/build.sh: go mod download gave no source directory" >&2; exit 1; }
cp -r "$source" "$work/src"
chmod -R u+w "$work/src"
mkdir -p "$dir.tmp"
(cd "$work/src" && CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=${VERSION}" \
  -o "$dir.tmp/helm" ./cmd/helm) >&2
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "$dir/helm"
