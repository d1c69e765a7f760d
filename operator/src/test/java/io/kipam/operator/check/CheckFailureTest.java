package io.kipam.operator.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

class CheckFailureTest {

  @Test
  void aForbiddenReadNamesTheServerTheCodeAndTheApiServersReason() {
    KubernetesClientException forbidden =
        new KubernetesClientException(
            "Failure executing: GET",
            403,
            new StatusBuilder()
                .withCode(403)
                .withMessage(
                    "pods \"p\" is forbidden: User \"x\" cannot get resource \"pods\"\nin namespace")
                .build());

    String line = CheckCommand.failure(forbidden, "the API server https://127.0.0.1:6443/");

    assertThat(line)
        .isEqualTo(
            "the API server https://127.0.0.1:6443/ refused: 403 pods \"p\" is forbidden: User"
                + " \"x\" cannot get resource \"pods\" in namespace");
  }

  @Test
  void anUnreachableServerNamesTheServerAndTheCause() {
    KubernetesClientException unreachable =
        new KubernetesClientException(
            "Operation failed", new ConnectException("Connection refused"));

    String line = CheckCommand.failure(unreachable, "the API server https://127.0.0.1:1/");

    assertThat(line)
        .isEqualTo(
            "cannot reach the API server https://127.0.0.1:1/: java.net.ConnectException:"
                + " Connection refused");
  }
}
