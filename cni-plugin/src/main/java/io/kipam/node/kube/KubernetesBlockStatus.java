package io.kipam.node.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.node.alloc.BlockObject;
import io.kipam.node.alloc.BlockRef;
import io.kipam.node.alloc.BlockStatusStore;
import io.kipam.runtime.client.Named;
import io.kipam.runtime.client.TokenBucket;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link BlockStatusStore} on the Kubernetes API: patches of an IPBlock's status subresource that
 * name only the fields the node daemon owns, so they never overwrite what kipam-operator writes,
 * and never land in another object of the block's name (deleted and claimed again, by any node).
 *
 * <ul>
 *   <li>{@code status.allocated}: a JSON patch that first tests the object's UID (the API server
 *       ignores a UID in a merge patch of the status subresource). A block without a status gets
 *       one only if it is still at the resourceVersion it was seen at, so a status written
 *       meanwhile is never replaced.
 *   <li>{@code status.mode: Shared}, the answer to a conversion request: a JSON patch that tests
 *       the UID and that the request still stands.
 *   <li>A release answer: a JSON merge patch of {@code status.release} carrying the resourceVersion
 *       it was decided on (which also tells one object from another).
 * </ul>
 */
public final class KubernetesBlockStatus implements BlockStatusStore {

  private final KubernetesClient client;
  private final TokenBucket limiter;

  public KubernetesBlockStatus(KubernetesClient client, TokenBucket limiter) {
    this.client = client;
    this.limiter = limiter;
  }

  @Override
  public boolean writeAllocated(BlockObject seen, long allocated) {
    List<Map<String, Object>> ops = new ArrayList<>();
    ops.add(op("test", "/metadata/uid", seen.ref().uid()));
    if (seen.hasStatus()) {
      ops.add(op("add", "/status/allocated", allocated));
    } else {
      if (seen.resourceVersion() == null) {
        return false;
      }
      ops.add(op("test", "/metadata/resourceVersion", seen.resourceVersion()));
      ops.add(op("add", "/status", Map.of("allocated", allocated)));
    }
    // A failed test (or a status gone meanwhile) is 422: not the object seen.
    return patch(
            seen.ref(), PatchType.JSON, Serialization.asJson(ops), 422, "write status.allocated of")
        != null;
  }

  @Override
  public String answerRelease(BlockRef ref, String resourceVersion, ReleaseAnswer answer) {
    Map<String, Object> release = new LinkedHashMap<>();
    release.put("state", answer.state().name());
    release.put("requestedAt", answer.requestedAt());
    release.put("respondedAt", answer.respondedAt());
    if (answer.reason() != null) {
      release.put("reason", answer.reason());
    }
    String body =
        Serialization.asJson(
            Map.of(
                "metadata", Map.of("resourceVersion", resourceVersion),
                "status", Map.of("release", release)));
    // 409: changed since it was decided on (or another object).
    return patch(ref, PatchType.JSON_MERGE, body, 409, "answer the release request of");
  }

  @Override
  public boolean writeShared(BlockRef ref, String shareRequestedAt) {
    // Tests, not a resourceVersion: this node's own status.allocated writes change the version
    // often, while only the object and the standing request matter (the slot is closed on this
    // node since the request was seen, and mode never goes back).
    List<Map<String, Object>> ops =
        List.of(
            op("test", "/metadata/uid", ref.uid()),
            op("test", "/status/share/requestedAt", shareRequestedAt),
            op("add", "/status/mode", "Shared"));
    return patch(ref, PatchType.JSON, Serialization.asJson(ops), 422, "write status.mode of")
        != null;
  }

  @Override
  public boolean requestShare(BlockRef ref, String requestedAt, String reason) {
    Map<String, Object> share = new LinkedHashMap<>();
    share.put("requestedAt", requestedAt);
    share.put("reason", reason);
    List<Map<String, Object>> ops =
        List.of(op("test", "/metadata/uid", ref.uid()), op("add", "/status/share", share));
    return patch(ref, PatchType.JSON, Serialization.asJson(ops), 422, "ask for Shared mode of")
        != null;
  }

  private static Map<String, Object> op(String op, String path, Object value) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("op", op);
    m.put("path", path);
    m.put("value", value);
    return m;
  }

  /**
   * The patched block's resourceVersion, or null when it is gone (404) or not as seen ({@code
   * notAsSeen}).
   */
  private String patch(BlockRef ref, PatchType type, String body, int notAsSeen, String what) {
    try {
      limiter.acquire();
      IPBlock patched =
          Named.object(client, IPBlock.class, ref.name())
              .subresource("status")
              .patch(PatchContext.of(type), body);
      return patched.getMetadata().getResourceVersion();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404 || e.getCode() == notAsSeen) {
        return null;
      }
      throw KubernetesStore.translate(what + " IPBlock " + ref.name(), e, false);
    }
  }
}
