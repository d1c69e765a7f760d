#!/usr/bin/env bash
# Writes the images the real-node tests import into containerd, since no registry is reachable:
#
#   kipam.io/pause:1      the pod sandbox image containerd is configured with
#   kipam.io/workload:1   a pod that runs until it is stopped
#
# Both hold one file, /pause, a static Go program (pause/main.go) that waits for SIGTERM or SIGINT.
# Each is a docker-archive tarball (manifest.json, the image config, one layer.tar), the format
# `ctr images import` reads, in ${KIPAM_TOOLS_DIR:-$HOME/.cache/kipam}/node-images/<hash of the
# source>/. Reused when present. The last line printed is the directory.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
key=$(cat "$here/build.sh" "$here/pause/main.go" "$here/pause/go.mod" | sha256sum | cut -c1-12)
dir="${KIPAM_TOOLS_DIR:-$HOME/.cache/kipam}/node-images/$key"
if [ -f "$dir/pause.tar" ] && [ -f "$dir/workload.tar" ]; then
  echo "node images: reusing $dir" >&2
  echo "$dir"
  exit 0
fi
command -v go >/dev/null || { echo "node-images/build.sh: Go is needed to build the pause image; install Go 1.21 or newer" >&2; exit 1; }
case $(uname -m) in
  x86_64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "node-images/build.sh: no image for machine type $(uname -m)" >&2; exit 1 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rootfs"
(cd "$here/pause" && CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -ldflags "-s -w" -o "$work/rootfs/pause" .)
# A reproducible layer: fixed owner and time, so the same source gives the same image digest.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work/rootfs" -cf "$work/layer.tar" pause
layer_sha=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)

# image NAME TAG FILE: one docker-archive tarball holding the layer under NAME:TAG.
image() {
  local name=$1 file=$2 img="$work/$2.d"
  mkdir -p "$img/$layer_sha"
  cp "$work/layer.tar" "$img/$layer_sha/layer.tar"
  printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/pause"],"StopSignal":"SIGTERM"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created_by":"hack/node-images/build.sh"}]}' \
    "$arch" "$layer_sha" > "$img/config.json"
  local config_sha
  config_sha=$(sha256sum "$img/config.json" | cut -d' ' -f1)
  mv "$img/config.json" "$img/$config_sha.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' \
    "$config_sha" "$name" "$layer_sha" > "$img/manifest.json"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$img" -cf "$work/$file.tar" .
}
image kipam.io/pause:1 pause
image kipam.io/workload:1 workload

mkdir -p "$dir"
mv -f "$work/pause.tar" "$work/workload.tar" "$dir/"
echo "node images: wrote kipam.io/pause:1 and kipam.io/workload:1 into $dir" >&2
echo "$dir"
