package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.node.alloc.RequestRejectedException;
import io.kipam.node.alloc.StoreUnavailableException;
import io.kipam.node.alloc.WriteOutcomeUnknownException;
import java.net.ConnectException;
import java.net.SocketException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** How API failures are sorted by what they say about a write. */
class FailureTranslationTest {

  private static RuntimeException create(KubernetesClientException e) {
    return KubernetesStore.translate("create IPAddress q0/p.10-0-0-7", e, true);
  }

  @Test
  void aConnectionClosedAfterTheRequestIsAnUnknownOutcome() {
    // What fabric8 throws when the connection is cut before the answer: no HTTP status at all.
    var closed =
        new KubernetesClientException("Connection was closed", new SocketException("reset"));

    assertThat(closed.getCode()).isLessThan(100);
    assertThat(create(closed)).isInstanceOf(WriteOutcomeUnknownException.class);
  }

  @Test
  void aConnectionNeverMadeIsUnavailableAndCertainlyNotWritten() {
    var refused =
        new KubernetesClientException("connect failed", new ConnectException("Connection refused"));

    RuntimeException sorted = create(refused);

    assertThat(sorted).isInstanceOf(StoreUnavailableException.class);
    assertThat(sorted).isNotInstanceOf(WriteOutcomeUnknownException.class);
  }

  @Test
  void serverErrorsAreUnknownAndThrottlingIsNotWritten() {
    assertThat(create(status(503))).isInstanceOf(WriteOutcomeUnknownException.class);
    assertThat(create(status(429))).isNotInstanceOf(WriteOutcomeUnknownException.class);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "refused content carries the reason of the API server, 422, spec.containerID: Too long",
    "a write refused to the caller carries the reason of the API server, 403, "
        + "refused to create IPAddress q0/p.10-0-0-7"
  })
  void aRefusedWriteCarriesTheApiServersReason(String description, int code, String reason) {
    RuntimeException sorted = create(status(code));

    assertThat(sorted)
        .isInstanceOfSatisfying(
            RequestRejectedException.class, r -> assertThat(r.status()).isEqualTo(code))
        .hasMessageContaining(reason);
  }

  private static KubernetesClientException status(int code) {
    return new KubernetesClientException(
        new StatusBuilder().withCode(code).withMessage("spec.containerID: Too long").build());
  }
}
