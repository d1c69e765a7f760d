package io.kipam.system.harness;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Installs the built kipam executable, the native binary, into a CNI bin directory with the
 * project's own script, so every IT and E2E test calls kipam as a runtime on a node would.
 */
public final class Installer {

  /** The native binary {@code src/main/go/build.sh} built in the generate-resources phase. */
  public static final Path NATIVE_KIPAM = CniPluginBuild.nativeKipam();

  private Installer() {}

  /**
   * Installs the Java version of kipam (the build's {@code *-shim.jar}, a launcher running this
   * JVM, and its class-data-sharing archive), as install-kipam.sh does when given the jar.
   */
  public static Path installShim(Path binDir, Path socket)
      throws IOException, InterruptedException {
    Path jar;
    try (var jars = java.nio.file.Files.list(CniPluginBuild.target())) {
      jar =
          jars.filter(f -> f.getFileName().toString().endsWith("-shim.jar"))
              .findFirst()
              .orElseThrow(
                  () -> new IllegalStateException("no *-shim.jar: build the module first"));
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    run(jar.toString(), binDir, java, socket);
    return binDir.resolve("kipam");
  }

  /** Installs kipam so that configurations naming no socket reach {@code socket}. */
  public static Path install(Path binDir, Path socket) throws IOException, InterruptedException {
    if (!NATIVE_KIPAM.toFile().canExecute()) {
      throw new IllegalStateException(
          NATIVE_KIPAM + " is missing: build the cni-plugin module first");
    }
    run(NATIVE_KIPAM.toString(), binDir, "", socket);
    return binDir.resolve("kipam");
  }

  private static void run(String kipam, Path binDir, String java, Path socket)
      throws IOException, InterruptedException {
    Process install =
        new ProcessBuilder(
                "sh",
                CniPluginBuild.installScript().toString(),
                kipam,
                binDir.toString(),
                java,
                socket.toString())
            .inheritIO()
            .start();
    if (!install.waitFor(120, TimeUnit.SECONDS) || install.exitValue() != 0) {
      throw new IllegalStateException("install-kipam.sh failed");
    }
  }
}
