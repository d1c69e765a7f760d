#!/bin/sh
# Assembles the root file system kipam's images are built on, since no base image can be pulled:
#
#   build.sh OUTPUT JAVA_HOME MODULES
#
# The runtime is Java 25 or later (kipam's classes are built for 17): kipam-node's image carries an
# AOT cache of its start (docs/images.md), which needs 25's AOT cache. JAVA_HOME is used when it is
# one; otherwise KIPAM_IMAGE_JDK, then the newest JDK of 25 or later installed where Linux
# distributions put JDKs (/usr/lib/jvm). None found: the build stops and says so.
#
# OUTPUT/root gets a Java runtime jlinked from that JDK with MODULES (comma-separated) at
# /opt/java, with the JDK's class-data archive of its own classes (so a JVM starts by mapping them
# instead of loading and verifying each; only the compressed-oops variant, which kipam's sized
# heaps use), every shared library that runtime loads at the path the dynamic loader looks for it
# (found with ldd, the loader included), /etc/passwd and /etc/group with root and nonroot (65532),
# and an empty /tmp. Maven runs this (the images module) and Jib adds OUTPUT/root to the image, on
# top of "scratch". The result is kept: a second run with the same JDK and modules does nothing.
set -eu
usage="usage: build.sh OUTPUT JAVA_HOME MODULES"
out=${1:?$usage}
java_home=${2:?$usage}
modules=${3:?$usage}
feature() { # the feature release of the JDK at $1 (25 for 25.0.3), or 0
  sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null | grep . || echo 0
}
if [ "$(feature "$java_home")" -lt 25 ]; then
  found=""
  for candidate in ${KIPAM_IMAGE_JDK:-} /usr/lib/jvm/*; do
    if [ -x "$candidate/bin/jlink" ] && [ "$(feature "$candidate")" -ge 25 ] &&
      { [ -z "$found" ] || [ "$(feature "$candidate")" -gt "$(feature "$found")" ]; }; then
      found=$candidate
    fi
  done
  [ -n "$found" ] || {
    echo "image-base: needs a JDK of 25 or later with jlink (kipam-node's AOT cache); $java_home is" \
      "$(feature "$java_home"). Install one under /usr/lib/jvm or set KIPAM_IMAGE_JDK" >&2
    exit 1
  }
  java_home=$found
fi
root="$out/root"
jlink_options="--strip-debug --no-header-files --no-man-pages --compress=zip-6 --generate-cds-archive"
key="$("$java_home/bin/java" -version 2>&1 | tr '\n' ' ') $java_home $modules $jlink_options"
if [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] && [ -x "$root/opt/java/bin/java" ]; then
  echo "image-base: $root is up to date"
  exit 0
fi
command -v ldd >/dev/null 2>&1 || { echo "image-base: needs ldd (glibc) on PATH" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$root/opt" "$root/etc" "$root/tmp"
# shellcheck disable=SC2086 # the options are words
"$java_home/bin/jlink" --add-modules "$modules" --output "$root/opt/java" $jlink_options
rm -f "$root/opt/java/lib/server/classes_nocoops.jsa"

# The libraries the runtime's executables and its own libraries link against, where they live on
# this machine: the image has no other copy of glibc.
find "$root/opt/java" -type f \( -path '*/bin/*' -o -name '*.so' -o -name jspawnhelper \) |
  while read -r file; do
    ldd "$file" 2>/dev/null || true
  done |
  awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u |
  while read -r lib; do
    case "$lib" in "$root"/*) continue ;; esac
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
# libjvm.so is loaded before the runtime's other libraries, which find it already in the process.
missing=$(find "$root/opt/java" -type f \( -path '*/bin/*' -o -name '*.so' \) -exec ldd {} \; 2>/dev/null |
  grep 'not found' | grep -v 'libjvm.so' || true)
[ -z "$missing" ] || { echo "image-base: libraries not found: $missing" >&2; exit 1; }

cat > "$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat > "$root/etc/group" <<'GROUP'
root:x:0:
nonroot:x:65532:
GROUP
printf '%s' "$key" > "$out/key"
echo "image-base: assembled $root ($(du -sh "$root" | cut -f1))"
