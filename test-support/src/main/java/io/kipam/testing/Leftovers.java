package io.kipam.testing;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What earlier test classes left on the shared control plane, removed before the next class starts:
 * kipam's objects (their finalizers taken off first, since no kipam-operator or kipam-node of
 * theirs runs any more), Pods (at once: they have no kubelet to confirm their end), the test
 * namespaces and the Nodes tests registered.
 *
 * <p>Without this the control plane grows over a run, and every kipam-operator a later class starts
 * lists, reconciles and audits the pools, blocks and addresses of every class before it: work, API
 * traffic and CPU no test asked for, on a machine whose two cores the test itself needs.
 */
public final class Leftovers {

  private static final Logger log = LoggerFactory.getLogger(Leftovers.class);

  /** kipam's kinds by plural, addresses first: no address outlives its block in between. */
  private static final List<ResourceDefinitionContext> KIPAM_KINDS =
      List.of(
          kipamKind("ipaddresses", true),
          kipamKind("ipblocks", false),
          kipamKind("ippools", false));

  private static final String NO_FINALIZERS = "{\"metadata\":{\"finalizers\":null}}";

  private Leftovers() {}

  /** Removes what test classes made on the control plane {@code client} administers. */
  public static void clear(KubernetesClient client) {
    long started = System.nanoTime();
    int removed = 0;
    for (ResourceDefinitionContext kind : KIPAM_KINDS) {
      removed += clearKipamKind(client, kind);
    }
    for (Namespace ns : client.namespaces().list().getItems()) {
      String namespace = ns.getMetadata().getName();
      if (!namespace.startsWith("kube-")) {
        removed += client.pods().inNamespace(namespace).withGracePeriod(0).delete().size();
      }
    }
    removed += client.nodes().delete().size();
    log.info(
        "removed {} objects earlier test classes left, in {} ms",
        removed,
        (System.nanoTime() - started) / 1_000_000);
  }

  private static ResourceDefinitionContext kipamKind(String plural, boolean namespaced) {
    return new ResourceDefinitionContext.Builder()
        .withGroup("kipam.io")
        .withVersion("v1alpha1")
        .withPlural(plural)
        .withNamespaced(namespaced)
        .build();
  }

  private static int clearKipamKind(KubernetesClient client, ResourceDefinitionContext kind) {
    String crd = kind.getPlural() + "." + kind.getGroup();
    if (client.apiextensions().v1().customResourceDefinitions().withName(crd).get() == null) {
      return 0; // not installed: nothing of this kind to remove
    }
    var resources = client.genericKubernetesResources(kind);
    List<GenericKubernetesResource> items =
        kind.isNamespaceScoped()
            ? resources.inAnyNamespace().list().getItems()
            : resources.list().getItems();
    int removed = 0;
    for (GenericKubernetesResource item : items) {
      Resource<GenericKubernetesResource> resource = resources.resource(item);
      removed +=
          ignoringGone(
              () -> {
                if (hasFinalizers(item)) {
                  resource.patch(PatchContext.of(PatchType.JSON_MERGE), NO_FINALIZERS);
                }
                return resource.delete().size();
              });
    }
    return removed;
  }

  private static boolean hasFinalizers(HasMetadata item) {
    return item.getMetadata().getFinalizers() != null
        && !item.getMetadata().getFinalizers().isEmpty();
  }

  private static int ignoringGone(java.util.function.IntSupplier removal) {
    try {
      return removal.getAsInt();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return 0; // gone meanwhile, as wanted
      }
      throw e;
    }
  }
}
