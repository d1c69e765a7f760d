#!/bin/sh
# Installs the kipam CNI executable into a CNI bin directory:
#
#   install-kipam.sh KIPAM CNI_BIN_DIR [JAVA [SOCKET]]
#
# KIPAM is the build's native binary (cni-plugin/target/kipam): a static executable that needs no
# JVM on the node. It is copied to CNI_BIN_DIR/kipam, and SOCKET (default /run/kipam/kipam.sock)
# is written to CNI_BIN_DIR/kipam.conf as the daemon's socket for configurations that name none.
# JAVA is not used for it (pass "" to give SOCKET).
#
# KIPAM may instead be the Java version's *-shim.jar: then the launcher kept next to this script is
# installed with the jar, pointed at JAVA (default: the java on PATH) and SOCKET, and a
# class-data-sharing archive of one VERSION call is recorded, so later calls start faster.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: install-kipam.sh KIPAM CNI_BIN_DIR [JAVA [SOCKET]]"
kipam=${1:?$usage}
target=${2:?$usage}
java=${3:-}
socket=${4:-}
mkdir -p "$target"
case "$kipam" in
  *.jar)
    [ -n "$java" ] || java=$(command -v java || true)
    [ -x "$java" ] || { echo "install-kipam.sh: no java at '$java'" >&2; exit 1; }
    socket_option=
    [ -n "$socket" ] && socket_option="-Dkipam.socket=$socket"
    rm -f "$target/kipam.conf"
    cp "$kipam" "$target/kipam.jar.tmp" && mv "$target/kipam.jar.tmp" "$target/kipam.jar"
    sed -e "s|@JAVA@|$java|" -e "s|@SOCKET_OPTION@|$socket_option|" "$here/kipam" > "$target/kipam.tmp"
    chmod 0755 "$target/kipam.tmp" && mv "$target/kipam.tmp" "$target/kipam"
    rm -f "$target/kipam.jsa"
    echo '{"cniVersion":"1.1.0"}' | CNI_COMMAND=VERSION "$java" -XX:ArchiveClassesAtExit="$target/kipam.jsa" \
      -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$target/kipam.jar" io.kipam.cni.shim.Kipam >/dev/null 2>&1 \
      || rm -f "$target/kipam.jsa"
    ;;
  *)
    # The configuration first, then the binary by rename: a runtime never runs a half-copied file.
    if [ -n "$socket" ]; then
      printf 'socket=%s\n' "$socket" > "$target/kipam.conf.tmp"
      mv "$target/kipam.conf.tmp" "$target/kipam.conf"
    else
      rm -f "$target/kipam.conf"
    fi
    cp "$kipam" "$target/kipam.tmp" && chmod 0755 "$target/kipam.tmp" && mv "$target/kipam.tmp" "$target/kipam"
    rm -f "$target/kipam.jar" "$target/kipam.jsa"
    answer=$(echo '{"cniVersion":"1.1.0"}' | CNI_COMMAND=VERSION "$target/kipam") || {
      echo "install-kipam.sh: $target/kipam does not run on this machine" >&2
      exit 1
    }
    echo "kipam answers VERSION with $answer"
    ;;
esac
echo "installed kipam into $target"
