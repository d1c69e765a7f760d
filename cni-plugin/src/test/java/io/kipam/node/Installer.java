package io.kipam.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Installs the built kipam executable into a CNI bin directory with the project's own script. */
final class Installer {

  private Installer() {}

  /** Installs kipam so that configurations naming no socket reach {@code socket}. */
  static Path install(Path binDir, Path socket) throws IOException, InterruptedException {
    Path jar;
    try (var files = Files.list(Path.of("target"))) {
      jar =
          files
              .filter(f -> f.getFileName().toString().endsWith("-shim.jar"))
              .findFirst()
              .orElseThrow(() -> new IllegalStateException("package the module first"));
    }
    Process install =
        new ProcessBuilder(
                "sh",
                "src/main/dist/install-kipam.sh",
                jar.toString(),
                binDir.toString(),
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                socket.toString())
            .inheritIO()
            .start();
    if (!install.waitFor(120, TimeUnit.SECONDS) || install.exitValue() != 0) {
      throw new IllegalStateException("install-kipam.sh failed");
    }
    return binDir.resolve("kipam");
  }
}
