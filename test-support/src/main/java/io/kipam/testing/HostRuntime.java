package io.kipam.testing;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;

/**
 * The host software a {@link RealNode} needs: Linux, root, iproute2, containerd (with ctr) and
 * runc. containerd and runc are installed from the distribution with apt-get when they are missing;
 * when that is not possible, {@link #missing()} says why in one line.
 *
 * <p>Self-contained on purpose: {@code ./kipam-demo} runs this file with {@code java
 * HostRuntime.java} before anything is built, to choose between the real node and simulated nodes
 * with the same reason the real-node tier fails with. It prints nothing and exits 0 when a real
 * node can run, else prints the reason and exits 1; also when another process has the real node.
 */
public final class HostRuntime {

  /**
   * One real node per machine: kubelet and containerd write fixed host paths (see {@link
   * RealNode}), so a second node would share and then remove them. {@link RealNode} holds this lock
   * from start to close.
   */
  static final Path LOCK = Path.of("/run/lock/kipam-real-node.lock");

  private HostRuntime() {}

  public static void main(String[] args) {
    Optional<String> missing = missing();
    if (missing.isEmpty() && inUse()) {
      missing = Optional.of("another kipam run has this machine's real node (" + LOCK + ")");
    }
    missing.ifPresent(System.out::println);
    System.exit(missing.isPresent() ? 1 : 0);
  }

  /** Fails with the one-line reason when a real node cannot run here. */
  static void require() {
    missing()
        .ifPresent(
            reason -> {
              throw new IllegalStateException(
                  "the real-node tier cannot run here: "
                      + reason
                      + "; fix that, or skip the end-to-end tier with -DskipE2E");
            });
  }

  /**
   * Why a real node cannot run on this machine, in one line; empty when it can. Installs containerd
   * and runc with apt-get when only they are missing.
   */
  public static Optional<String> missing() {
    if (!System.getProperty("os.name", "").startsWith("Linux")) {
      return Optional.of("not Linux (a real node needs network namespaces)");
    }
    if (!"root".equals(System.getProperty("user.name"))) {
      return Optional.of(
          "not root (network namespaces, containerd and kubelet need it): running as "
              + System.getProperty("user.name"));
    }
    if (!onPath("ip") || !onPath("nsenter")) {
      return Optional.of("no iproute2 (ip) or no util-linux (nsenter)");
    }
    if (!onPath("openssl")) {
      return Optional.of("no openssl (it writes the API server's client certificate for kubelet)");
    }
    if (onPath("containerd") && onPath("ctr") && onPath("runc")) {
      return Optional.empty();
    }
    if (!onPath("apt-get")) {
      return Optional.of("no containerd 1.6+ and runc, and no apt-get to install them");
    }
    String failed =
        run(
            "env",
            "DEBIAN_FRONTEND=noninteractive",
            "apt-get",
            "install",
            "-y",
            "--no-install-recommends",
            "containerd",
            "runc");
    if (failed != null) {
      return Optional.of(
          "no containerd and runc, and `apt-get install -y containerd runc` failed (run apt-get"
              + " update first?): "
              + failed);
    }
    return Optional.empty();
  }

  /** Runs a command; null when it succeeded, else the last line it printed. */
  private static String run(String... command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return p.waitFor() == 0 ? null : out.strip().lines().reduce((a, b) -> b).orElse("");
    } catch (IOException e) {
      return e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
  }

  /** Whether another process holds {@link #LOCK} now. */
  static boolean inUse() {
    try (FileChannel channel = lockChannel()) {
      FileLock lock = channel.tryLock();
      if (lock == null) {
        return true;
      }
      lock.release();
      return false;
    } catch (OverlappingFileLockException e) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Opens {@link #LOCK}, creating it; the caller locks it. */
  static FileChannel lockChannel() throws IOException {
    Files.createDirectories(LOCK.getParent());
    return FileChannel.open(LOCK, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
  }

  private static boolean onPath(String command) {
    String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    return List.of(path.split(":")).stream()
        .anyMatch(dir -> Files.isExecutable(Path.of(dir, command)));
  }
}
