package io.kipam.system.harness;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

/**
 * What kipam-operator does to blocks in the release handshake, played by tests (these tests run
 * kipam-node alone): it writes a request into {@code status.release}, clears it, and deletes a
 * block.
 */
public final class PlayedOperator {

  private final KubernetesClient client;

  public PlayedOperator(KubernetesClient client) {
    this.client = client;
  }

  /** Asks for {@code block} back; returns the round's {@code requestedAt}. */
  public String request(String block) {
    String requestedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    patchStatus(
        block,
        "{\"status\":{\"release\":{\"state\":\"Requested\",\"requestedAt\":\""
            + requestedAt
            + "\",\"reason\":\"test\",\"respondedAt\":null}}}");
    return requestedAt;
  }

  public void clear(String block) {
    patchStatus(block, "{\"status\":{\"release\":null}}");
  }

  /**
   * Deletes the block and lets it go, as the operator does once its fresh checks after a Ready
   * answer have passed: the daemon's finalizer {@code kipam.io/block-protection} is removed.
   */
  public void delete(String block) {
    client.resources(IPBlock.class).withName(block).delete();
    try {
      client
          .resources(IPBlock.class)
          .withName(block)
          .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }

  public IPBlock block(String name) {
    return client.resources(IPBlock.class).withName(name).get();
  }

  public ReleaseState state(String name) {
    IPBlock block = block(name);
    return block == null || block.getStatus() == null || block.getStatus().getRelease() == null
        ? null
        : block.getStatus().getRelease().getState();
  }

  /** Changes the block's resourceVersion (a label), without touching its spec or status. */
  public void touch(String block, int n) {
    client
        .resources(IPBlock.class)
        .withName(block)
        .edit(
            b -> {
              b.setMetadata(
                  new ObjectMetaBuilder(b.getMetadata())
                      .addToLabels(Map.of("touch", Integer.toString(n)))
                      .build());
              return b;
            });
  }

  private void patchStatus(String block, String patch) {
    client
        .resources(IPBlock.class)
        .withName(block)
        .subresource("status")
        .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
  }
}
