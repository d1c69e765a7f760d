package io.kipam.runtime.client;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.lang.reflect.InvocationTargetException;

/**
 * An object by name, for writes that need only its name: a patch, a status patch. fabric8 reads the
 * object afresh before it sends a patch of a bare name ({@code withName(n).patch(...)}), one GET
 * per write that no kipam write needs (each carries its own preconditions, or none); a patch
 * through an object in hand is sent as it is. The object here carries its name and namespace and
 * nothing else, so only patches (whose body is what is sent) may go through it.
 */
public final class Named {

  private Named() {}

  /** The cluster-scoped object {@code name} of {@code type}. */
  public static <T extends HasMetadata> Resource<T> object(
      KubernetesClient client, Class<T> type, String name) {
    return client.resources(type).resource(bare(type, null, name));
  }

  /** The object {@code namespace/name} of {@code type}. */
  public static <T extends HasMetadata> Resource<T> object(
      KubernetesClient client, Class<T> type, String namespace, String name) {
    return client.resources(type).inNamespace(namespace).resource(bare(type, namespace, name));
  }

  private static <T extends HasMetadata> T bare(Class<T> type, String namespace, String name) {
    try {
      T object = type.getDeclaredConstructor().newInstance();
      object.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
      return object;
    } catch (InstantiationException
        | IllegalAccessException
        | InvocationTargetException
        | NoSuchMethodException e) {
      throw new IllegalArgumentException(type.getName() + " has no public empty constructor", e);
    }
  }
}
