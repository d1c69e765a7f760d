package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import java.util.Map;
import java.util.Optional;

/**
 * Asks the API server, never a cache, whether IPAddresses of a pool or of one block exist. The
 * operator holds no IPAddress in memory (there may be hundreds of thousands); it asks only when a
 * decision depends on the answer, with one label-selected LIST across all namespaces and a limit of
 * one item: the first address found settles the question. A LIST without a resourceVersion is a
 * consistent read, so an address created before the call is seen.
 */
public final class AddressLookup {

  private final KubernetesClient client;

  public AddressLookup(KubernetesClient client) {
    this.client = client;
  }

  /** Some IPAddress of {@code pool}, as {@code namespace/name}, if any exists. */
  public Optional<String> anyInPool(String pool) {
    return any(Map.of(ApiConstants.LABEL_POOL, pool));
  }

  /**
   * Some IPAddress of the block of {@code pool} whose {@code kipam.io/block} label is {@code
   * blockLabel}, as {@code namespace/name}, if any exists.
   */
  public Optional<String> anyInBlock(String pool, String blockLabel) {
    return any(Map.of(ApiConstants.LABEL_POOL, pool, ApiConstants.LABEL_BLOCK, blockLabel));
  }

  private Optional<String> any(Map<String, String> labels) {
    return client
        .resources(IPAddress.class)
        .inAnyNamespace()
        .withLabels(labels)
        .list(new ListOptionsBuilder().withLimit(1L).build())
        .getItems()
        .stream()
        .findFirst()
        .map(a -> a.getMetadata().getNamespace() + "/" + a.getMetadata().getName());
  }
}
