package io.kipam.node.kube;

import io.kipam.api.net.IpFamily;
import io.kipam.node.alloc.PoolView;
import java.util.Optional;

/**
 * What resolving an ADD reads of pools and namespaces, from the node's watches: a pool as a pod of
 * a namespace may use it, what a pool is whether or not the pod may use it, and the annotations of
 * a namespace that choose pools. {@link NodeWatch} is the one the daemon runs with; tests use a
 * map.
 */
public interface PoolDirectory {

  /** Pool {@code name} if this node may allocate from it for a pod of {@code namespace}. */
  PoolView pool(String name, String namespace) throws NodeWatch.PoolNotUsableException;

  /** The IP family of pool {@code name}, whether or not this pod may use it; empty if unknown. */
  Optional<IpFamily> poolFamily(String name);

  /**
   * The network of pool {@code name} ({@code spec.network}, {@link PoolView#PRIMARY} without one),
   * whether or not this pod may use it; empty if the pool is unknown.
   */
  Optional<String> poolNetwork(String name);

  /** The annotation {@code key} of namespace {@code namespace}, if it has it. */
  Optional<String> namespaceAnnotation(String namespace, String key);
}
