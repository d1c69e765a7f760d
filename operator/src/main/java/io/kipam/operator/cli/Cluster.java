package io.kipam.operator.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.operator.ApiClients;
import io.kipam.operator.check.CheckCommand;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The client every subcommand uses, with the limits of {@code check} (the operator's defaults: 50
 * requests/s, burst 100, 15 s per request), and the one line that says why it could not be made.
 */
final class Cluster {

  /** The kubeconfig could not be read; the message says which and why. */
  static final class Unreadable extends Exception {
    Unreadable(String message) {
      super(message);
    }
  }

  private Cluster() {}

  static KubernetesClient connect(Optional<Path> kubeconfig) throws Unreadable {
    try {
      return ApiClients.create(kubeconfig, 50, 100, Duration.ofSeconds(15));
    } catch (IOException | RuntimeException e) {
      throw new Unreadable(
          "cannot read the kubeconfig "
              + kubeconfig.map(Object::toString).orElse("(default)")
              + ": "
              + CheckCommand.oneLine(e.toString()));
    }
  }
}
