package io.kipam.runtime.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kipam.runtime.client.PreconditionedDelete.Answer;
import io.kipam.runtime.client.PreconditionedDelete.Outcome;
import org.junit.jupiter.api.Test;

class PreconditionedDeleteTest {

  private final KubernetesSerialization json = new KubernetesSerialization();

  @Test
  void theRequestCarriesTheUidAndOnlyAGivenResourceVersion() {
    DeleteOptions both =
        json.unmarshal(PreconditionedDelete.body(json, "u-1", "42"), DeleteOptions.class);
    assertThat(both.getPreconditions().getUid()).isEqualTo("u-1");
    assertThat(both.getPreconditions().getResourceVersion()).isEqualTo("42");

    DeleteOptions uidOnly =
        json.unmarshal(PreconditionedDelete.body(json, "u-1", null), DeleteOptions.class);
    assertThat(uidOnly.getPreconditions().getUid()).isEqualTo("u-1");
    assertThat(uidOnly.getPreconditions().getResourceVersion()).isNull();
  }

  @Test
  void pathsNameTheKipamResourcesWithEncodedSegments() {
    assertThat(PreconditionedDelete.blockPath("pool-a-10-0-0-0-26"))
        .isEqualTo("/apis/kipam.io/v1alpha1/ipblocks/pool-a-10-0-0-0-26");
    assertThat(PreconditionedDelete.addressPath("team a", "pool-a-10-0-0-5"))
        .isEqualTo("/apis/kipam.io/v1alpha1/namespaces/team+a/ipaddresses/pool-a-10-0-0-5");
  }

  @Test
  void aSuccessIsDeletedWithTheServersAnswer() {
    assertThat(PreconditionedDelete.answer("IPBlock b", 200, "{\"kind\":\"IPBlock\"}"))
        .isEqualTo(new Answer(Outcome.DELETED, "{\"kind\":\"IPBlock\"}"));
    assertThat(PreconditionedDelete.answer("IPBlock b", 202, "{}").outcome())
        .isEqualTo(Outcome.DELETED);
  }

  @Test
  void notFoundIsGoneAndConflictIsChanged() {
    assertThat(PreconditionedDelete.answer("IPBlock b", 404, "not found"))
        .isEqualTo(new Answer(Outcome.GONE, null));
    assertThat(PreconditionedDelete.answer("IPBlock b", 409, "precondition failed"))
        .isEqualTo(new Answer(Outcome.CHANGED, null));
  }

  @Test
  void anyOtherStatusIsAnExceptionWithThatCode() {
    assertThatThrownBy(() -> PreconditionedDelete.answer("IPBlock b", 403, "forbidden"))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("IPBlock b")
        .hasMessageContaining("HTTP 403 forbidden")
        .extracting(e -> ((KubernetesClientException) e).getCode())
        .isEqualTo(403);
    assertThatThrownBy(() -> PreconditionedDelete.answer("IPBlock b", 503, ""))
        .extracting(e -> ((KubernetesClientException) e).getCode())
        .isEqualTo(503);
  }
}
