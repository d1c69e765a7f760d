package io.kipam.node.kube;

import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Preconditions;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.node.alloc.AllocationStore;
import io.kipam.node.alloc.Lease;
import io.kipam.node.alloc.StoreUnavailableException;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * {@link AllocationStore} on the Kubernetes API: a block claim creates an IPBlock owned by its
 * pool, an allocation creates an IPAddress owned by its pod, and a release deletes the IPAddress
 * with its UID as precondition. 409 on create means "taken"; connection failures, timeouts, 429 and
 * 5xx are {@link StoreUnavailableException}s (try again later); anything else is a bug or a
 * misconfiguration and propagates as it is.
 */
public final class KubernetesStore implements AllocationStore {

  private final KubernetesClient client;
  private final Function<String, String> poolUid;
  private final WriteRateLimiter limiter;

  /**
   * @param poolUid the UID of an IPPool by name, from the node's pool cache (null if unknown)
   */
  public KubernetesStore(
      KubernetesClient client, Function<String, String> poolUid, WriteRateLimiter limiter) {
    this.client = client;
    this.poolUid = poolUid;
    this.limiter = limiter;
  }

  @Override
  public boolean claimBlock(String pool, Cidr block, String node) {
    IPBlock object = new IPBlock();
    String uid = poolUid.apply(pool);
    var meta =
        new ObjectMetaBuilder()
            .withName(ResourceNames.blockName(pool, block))
            .withLabels(
                Map.of(
                    ApiConstants.LABEL_POOL, pool,
                    ApiConstants.LABEL_NODE, node,
                    ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(block)));
    if (uid != null) {
      meta.withOwnerReferences(
          new OwnerReferenceBuilder()
              .withApiVersion(ApiConstants.API_VERSION)
              .withKind(IPPool.KIND)
              .withName(pool)
              .withUid(uid)
              .withBlockOwnerDeletion(false)
              .build());
    }
    object.setMetadata(meta.build());
    object.setSpec(new IPBlockSpec(pool, block.toString(), node));
    try {
      limiter.acquire();
      client.resource(object).create();
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return false;
      }
      throw translate("claim block " + object.getMetadata().getName(), e);
    }
  }

  @Override
  public Lease createAddress(Lease lease) {
    IPAddress object = new IPAddress();
    object.setMetadata(
        new ObjectMetaBuilder()
            .withName(lease.name())
            .withNamespace(lease.pod().namespace())
            .withLabels(
                Map.of(
                    ApiConstants.LABEL_POOL, lease.pool(),
                    ApiConstants.LABEL_NODE, lease.node(),
                    ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(lease.block())))
            .withOwnerReferences(
                new OwnerReferenceBuilder()
                    .withApiVersion("v1")
                    .withKind("Pod")
                    .withName(lease.pod().name())
                    .withUid(lease.pod().uid())
                    .withBlockOwnerDeletion(false)
                    .build())
            .build());
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(lease.ip().toString());
    spec.setPool(lease.pool());
    spec.setBlock(lease.blockName());
    spec.setNode(lease.node());
    spec.setPod(new PodReference(lease.pod().name(), lease.pod().uid()));
    spec.setContainerID(lease.attachment().containerId());
    spec.setInterfaceName(lease.attachment().ifName());
    spec.setMac(lease.mac());
    object.setSpec(spec);
    try {
      limiter.acquire();
      IPAddress created = client.resource(object).create();
      return lease.withObjectUid(created.getMetadata().getUid());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return null;
      }
      throw translate("create IPAddress " + lease.pod().namespace() + "/" + lease.name(), e);
    }
  }

  @Override
  public void deleteAddress(Lease lease) {
    // fabric8 offers a resourceVersion precondition on delete but not a UID one, and the UID is
    // what tells "the object this lease created" from "an object of the same name made since".
    DeleteOptions options = new DeleteOptions();
    options.setPreconditions(new Preconditions(null, lease.objectUid()));
    String url =
        client.getMasterUrl().toString().replaceAll("/$", "")
            + "/apis/"
            + ApiConstants.API_VERSION
            + "/namespaces/"
            + encode(lease.pod().namespace())
            + "/ipaddresses/"
            + encode(lease.name());
    HttpRequest request =
        client
            .getHttpClient()
            .newHttpRequestBuilder()
            .uri(url)
            .delete("application/json", Serialization.asJson(options))
            .build();
    HttpResponse<String> response;
    try {
      limiter.acquire();
      response =
          client
              .getHttpClient()
              .sendAsync(request, String.class)
              .get(client.getConfiguration().getRequestTimeout(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while deleting " + lease.name(), e);
    } catch (ExecutionException | TimeoutException e) {
      throw new StoreUnavailableException(
          "cannot reach the API server to delete IPAddress " + lease.name(), e);
    }
    int code = response.code();
    // 404: gone already. 409: the name now belongs to another object, which is not ours to delete.
    if (code / 100 == 2 || code == 404 || code == 409) {
      return;
    }
    String what = "delete IPAddress " + lease.pod().namespace() + "/" + lease.name();
    if (code == 429 || code >= 500) {
      throw new StoreUnavailableException(what + ": HTTP " + code, null);
    }
    throw new IllegalStateException(what + ": HTTP " + code + " " + response.body());
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  static RuntimeException translate(String what, KubernetesClientException e) {
    int code = e.getCode();
    if (code == 0 || code == 429 || code >= 500 || e.getCause() instanceof IOException) {
      return new StoreUnavailableException(
          "cannot "
              + what
              + ": the API server is unreachable or overloaded ("
              + e.getMessage()
              + ")",
          e);
    }
    return e;
  }
}
