#!/bin/sh
# Installs the kipam CNI executable into a CNI bin directory:
#
#   install-kipam.sh KIPAM_JAR CNI_BIN_DIR [JAVA [SOCKET]]
#
# copies the launcher (kept next to this script) and KIPAM_JAR (the build's *-shim.jar), points the launcher at JAVA (default: the java on PATH), and
# makes SOCKET (default /run/kipam/kipam.sock) the daemon's socket for configurations that name
# none, and records a class-data-sharing archive of one VERSION call, so later calls start faster.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
jar=${1:?usage: install-kipam.sh KIPAM_JAR CNI_BIN_DIR [JAVA [SOCKET]]}
target=${2:?usage: install-kipam.sh KIPAM_JAR CNI_BIN_DIR [JAVA [SOCKET]]}
java=${3:-$(command -v java)}
socket=${4:-}
socket_option=
[ -n "$socket" ] && socket_option="-Dkipam.socket=$socket"
[ -x "$java" ] || { echo "install-kipam.sh: no java at '$java'" >&2; exit 1; }
mkdir -p "$target"
cp "$jar" "$target/kipam.jar.tmp" && mv "$target/kipam.jar.tmp" "$target/kipam.jar"
sed -e "s|@JAVA@|$java|" -e "s|@SOCKET_OPTION@|$socket_option|" "$here/kipam" > "$target/kipam.tmp"
chmod 0755 "$target/kipam.tmp" && mv "$target/kipam.tmp" "$target/kipam"
rm -f "$target/kipam.jsa"
echo '{"cniVersion":"1.1.0"}' | CNI_COMMAND=VERSION "$java" -XX:ArchiveClassesAtExit="$target/kipam.jsa" \
  -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$target/kipam.jar" io.kipam.cni.shim.Kipam >/dev/null 2>&1 \
  || rm -f "$target/kipam.jsa"
echo "installed kipam into $target"
