#!/bin/sh
# Builds kipam, the CNI executable, as one static binary from Go's standard library alone:
#
#   build.sh OUTPUT VERSION [test]
#
# Maven runs this (cni-plugin's generate-resources phase, and the unit tests with "test"); it works
# offline, as kipam has no module dependencies. Needs Go (go.mod's version or newer) on PATH.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUTPUT VERSION [test]}
version=${2:?usage: build.sh OUTPUT VERSION [test]}
command -v go >/dev/null 2>&1 || {
  echo "build.sh: building kipam needs Go $(sed -n 's/^go //p' "$here/go.mod") or newer on PATH" \
    "(https://go.dev/dl/); none was found" >&2
  exit 1
}
cd "$here"
# The installed toolchain only, no module downloads: the build must not reach the network.
export CGO_ENABLED=0 GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
if [ "${3:-}" = test ]; then
  exec go test -count=1 ./...
fi
go vet ./...
exec go build -trimpath -buildvcs=false -ldflags "-s -w -buildid= -X main.version=$version" -o "$out" .
