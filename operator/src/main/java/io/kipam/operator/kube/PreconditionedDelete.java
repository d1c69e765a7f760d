package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.Preconditions;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.kipam.api.ApiConstants;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Deletes an IPBlock or an IPAddress only if it is still the object that was checked: a UID
 * precondition (an object deleted and created again under the same name is another object) and,
 * when given, a resourceVersion precondition (nothing changed since the fresh read the decision
 * rests on). fabric8 offers a resourceVersion precondition on delete but not a UID one, hence the
 * request by hand.
 */
public final class PreconditionedDelete {

  /** What the API server answered. */
  public enum Outcome {
    /** The object was deleted. */
    DELETED,
    /** The object was gone already. */
    GONE,
    /** A precondition failed: the object changed or is another object now. */
    CHANGED
  }

  private final KubernetesClient client;

  public PreconditionedDelete(KubernetesClient client) {
    this.client = client;
  }

  /**
   * @param resourceVersion the version the decision was made on, or null to require only the UID
   */
  public Outcome block(String name, String uid, String resourceVersion) {
    return delete("IPBlock " + name, "/ipblocks/" + encode(name), uid, resourceVersion);
  }

  /** Deletes the IPAddress {@code namespace/name} only if its UID is still {@code uid}. */
  public Outcome address(String namespace, String name, String uid) {
    return delete(
        "IPAddress " + namespace + "/" + name,
        "/namespaces/" + encode(namespace) + "/ipaddresses/" + encode(name),
        uid,
        null);
  }

  private static String encode(String segment) {
    return URLEncoder.encode(segment, StandardCharsets.UTF_8);
  }

  private Outcome delete(String what, String path, String uid, String resourceVersion) {
    DeleteOptions options = new DeleteOptions();
    options.setPreconditions(new Preconditions(resourceVersion, uid));
    String url =
        client.getMasterUrl().toString().replaceAll("/$", "")
            + "/apis/"
            + ApiConstants.API_VERSION
            + path;
    HttpRequest request =
        client
            .getHttpClient()
            .newHttpRequestBuilder()
            .uri(url)
            .delete("application/json", client.getKubernetesSerialization().asJson(options))
            .build();
    HttpResponse<String> response;
    try {
      response =
          client
              .getHttpClient()
              .sendAsync(request, String.class)
              .get(client.getConfiguration().getRequestTimeout(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KubernetesClientException("interrupted while deleting " + what, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new KubernetesClientException("cannot delete " + what + ": " + e, e);
    }
    int code = response.code();
    if (code / 100 == 2) {
      return Outcome.DELETED;
    }
    if (code == 404) {
      return Outcome.GONE;
    }
    if (code == 409) {
      return Outcome.CHANGED;
    }
    throw new KubernetesClientException(
        "cannot delete " + what + ": HTTP " + code + " " + response.body(), code, null);
  }
}
