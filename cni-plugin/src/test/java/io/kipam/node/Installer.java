package io.kipam.node;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Installs the built kipam executable, the native binary, into a CNI bin directory with the
 * project's own script, so every IT and E2E test calls kipam as a runtime on a node would.
 */
final class Installer {

  /** The native binary {@code src/main/go/build.sh} built in the generate-resources phase. */
  static final Path NATIVE_KIPAM = Path.of("target", "kipam");

  private Installer() {}

  /** Installs kipam so that configurations naming no socket reach {@code socket}. */
  static Path install(Path binDir, Path socket) throws IOException, InterruptedException {
    if (!NATIVE_KIPAM.toFile().canExecute()) {
      throw new IllegalStateException(NATIVE_KIPAM + " is missing: build the module first");
    }
    Process install =
        new ProcessBuilder(
                "sh",
                "src/main/dist/install-kipam.sh",
                NATIVE_KIPAM.toString(),
                binDir.toString(),
                "",
                socket.toString())
            .inheritIO()
            .start();
    if (!install.waitFor(120, TimeUnit.SECONDS) || install.exitValue() != 0) {
      throw new IllegalStateException("install-kipam.sh failed");
    }
    return binDir.resolve("kipam");
  }
}
