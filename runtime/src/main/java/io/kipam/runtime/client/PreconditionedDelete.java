package io.kipam.runtime.client;

import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.Preconditions;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
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
 * request by hand. kipam-node deletes its released addresses and empty blocks with it,
 * kipam-operator the blocks it reclaims and the orphans its audit finds.
 *
 * <p>The answer is sorted, not judged: 404 is {@link Outcome#GONE}, 409 {@link Outcome#CHANGED},
 * and each caller decides what those mean for it. Any other status, or no answer at all, is a
 * {@link KubernetesClientException}: with the HTTP status as its code, or with a negative code and
 * the transport's failure (an interrupt included) as its cause.
 */
public final class PreconditionedDelete {

  /** What the API server answered. */
  public enum Outcome {
    /** The object was deleted (or, held by a finalizer, is being deleted). */
    DELETED,
    /** The object was gone already. */
    GONE,
    /** A precondition failed: the object changed or is another object now. */
    CHANGED
  }

  /**
   * The outcome, and with {@link Outcome#DELETED} the API server's answer (the object, when a
   * finalizer keeps it), else null.
   */
  public record Answer(Outcome outcome, String body) {}

  private final KubernetesClient client;

  public PreconditionedDelete(KubernetesClient client) {
    this.client = client;
  }

  /**
   * Deletes the IPBlock {@code name} only if its UID is still {@code uid}.
   *
   * @param resourceVersion the version the decision was made on, or null to require only the UID
   */
  public Answer block(String name, String uid, String resourceVersion) {
    return delete("IPBlock " + name, blockPath(name), uid, resourceVersion);
  }

  /** Deletes the IPAddress {@code namespace/name} only if its UID is still {@code uid}. */
  public Answer address(String namespace, String name, String uid) {
    return delete("IPAddress " + namespace + "/" + name, addressPath(namespace, name), uid, null);
  }

  static String blockPath(String name) {
    return "/apis/" + ApiConstants.API_VERSION + "/ipblocks/" + encode(name);
  }

  static String addressPath(String namespace, String name) {
    return "/apis/"
        + ApiConstants.API_VERSION
        + "/namespaces/"
        + encode(namespace)
        + "/ipaddresses/"
        + encode(name);
  }

  private static String encode(String segment) {
    return URLEncoder.encode(segment, StandardCharsets.UTF_8);
  }

  static String body(KubernetesSerialization json, String uid, String resourceVersion) {
    DeleteOptions options = new DeleteOptions();
    options.setPreconditions(new Preconditions(resourceVersion, uid));
    return json.asJson(options);
  }

  static Answer answer(String what, int code, String body) {
    if (code / 100 == 2) {
      return new Answer(Outcome.DELETED, body);
    }
    if (code == 404) {
      return new Answer(Outcome.GONE, null);
    }
    if (code == 409) {
      return new Answer(Outcome.CHANGED, null);
    }
    throw new KubernetesClientException(
        "cannot delete " + what + ": HTTP " + code + " " + body, code, null);
  }

  private Answer delete(String what, String path, String uid, String resourceVersion) {
    String url = client.getMasterUrl().toString().replaceAll("/$", "") + path;
    HttpRequest request =
        client
            .getHttpClient()
            .newHttpRequestBuilder()
            .uri(url)
            .delete(
                "application/json", body(client.getKubernetesSerialization(), uid, resourceVersion))
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
    return answer(what, response.code(), response.body());
  }
}
