package io.kipam.operator.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import java.util.List;
import java.util.Map;

/**
 * Removes the finalizer {@code kipam.io/attachment} from one IPAddress, and nothing else: a JSON
 * patch that tests the object's UID and the finalizer at the index a fresh read found it, then
 * removes that one entry. Another finalizer, added or removed meanwhile, shifts the index and fails
 * the test; so does an object deleted and created again under the same name. Either way the object
 * is read again, a bounded number of times: the patch never removes what it did not see.
 */
public final class AttachmentFinalizer {

  /** What became of the finalizer. */
  public enum Outcome {
    /** This call removed it. */
    REMOVED,
    /** The object (of that UID) is gone, or no longer carries the finalizer: nothing to do. */
    ABSENT,
    /** It kept changing under every attempt; it still carries the finalizer. */
    CHANGING
  }

  private static final int ATTEMPTS = 5;

  private final KubernetesClient client;

  public AttachmentFinalizer(KubernetesClient client) {
    this.client = client;
  }

  /** Removes the finalizer from the IPAddress {@code namespace/name} if its UID is {@code uid}. */
  public Outcome remove(String namespace, String name, String uid) {
    return remove(namespace, name, uid, null);
  }

  /**
   * As {@link #remove(String, String, String)}, trying first with the object as {@code known} shows
   * it (a delete's answer, an object just listed; null: none), without a read: the patch's tests
   * make a stale one harmless, and a failed test reads the object afresh.
   */
  public Outcome remove(String namespace, String name, String uid, IPAddress known) {
    var resource = client.resources(IPAddress.class).inNamespace(namespace).withName(name);
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      IPAddress fresh = attempt == 0 && known != null ? known : resource.get();
      if (fresh == null || !uid.equals(fresh.getMetadata().getUid())) {
        return Outcome.ABSENT;
      }
      List<String> finalizers = fresh.getMetadata().getFinalizers();
      int index = finalizers == null ? -1 : finalizers.indexOf(ApiConstants.FINALIZER_ATTACHMENT);
      if (index < 0) {
        return Outcome.ABSENT;
      }
      try {
        // Patched through the object in hand: fabric8 reads an object afresh before a patch of a
        // bare name, a GET per write that the patch's tests make needless.
        client
            .resources(IPAddress.class)
            .inNamespace(namespace)
            .resource(fresh)
            .patch(PatchContext.of(PatchType.JSON), patch(uid, index));
        return Outcome.REMOVED;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          return Outcome.ABSENT;
        }
        // A failed test operation: 409 or 422 depending on the API server's version.
        if (e.getCode() != 409 && e.getCode() != 422) {
          throw e;
        }
      }
    }
    return Outcome.CHANGING;
  }

  private String patch(String uid, int index) {
    String path = "/metadata/finalizers/" + index;
    return client
        .getKubernetesSerialization()
        .asJson(
            List.of(
                Map.of("op", "test", "path", "/metadata/uid", "value", uid),
                Map.of("op", "test", "path", path, "value", ApiConstants.FINALIZER_ATTACHMENT),
                Map.of("op", "remove", "path", path)));
  }
}
