package io.kipam.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The host software a {@link RealNode} needs: containerd (with ctr), runc and iproute2, and root.
 * containerd and runc are installed from the distribution with apt-get when they are missing; when
 * that is not possible the failure says in one line what to do.
 */
final class HostRuntime {

  private HostRuntime() {}

  static void require() {
    if (!"root".equals(System.getProperty("user.name"))) {
      throw new IllegalStateException(
          "the real-node tier needs root (network namespaces, containerd, kubelet); run it as root"
              + " or skip the end-to-end tier with -DskipE2E");
    }
    if (!onPath("ip")) {
      throw new IllegalStateException("the real-node tier needs iproute2 (ip); install it");
    }
    if (onPath("containerd") && onPath("ctr") && onPath("runc")) {
      return;
    }
    if (!onPath("apt-get")) {
      throw new IllegalStateException(
          "the real-node tier needs containerd and runc, and there is no apt-get to install them;"
              + " install containerd 1.6+ and runc, then rerun");
    }
    try {
      RealNode.run(
          "env",
          "DEBIAN_FRONTEND=noninteractive",
          "apt-get",
          "install",
          "-y",
          "--no-install-recommends",
          "containerd",
          "runc");
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "the real-node tier needs containerd and runc, and `apt-get install -y containerd runc`"
              + " failed (run apt-get update first?): "
              + e.getMessage().lines().reduce((a, b) -> b).orElse(""),
          e);
    }
  }

  private static boolean onPath(String command) {
    String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    return List.of(path.split(":")).stream()
        .anyMatch(dir -> Files.isExecutable(Path.of(dir, command)));
  }
}
