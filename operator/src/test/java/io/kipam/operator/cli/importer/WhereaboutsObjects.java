package io.kipam.operator.cli.importer;

import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.operator.cli.importer.WhereaboutsState.Allocation;
import io.kipam.operator.cli.importer.WhereaboutsState.LivePod;
import io.kipam.operator.cli.importer.WhereaboutsState.Pool;
import java.util.List;
import java.util.Map;

/**
 * Whereabouts objects as the importer's tests write them: a network from its NAD's config, the
 * whereabouts IPPool of the range 10.70.0.0/24, and a cluster's state without reservations.
 */
final class WhereaboutsObjects {

  private WhereaboutsObjects() {}

  /** The network of the NAD {@code namespace/name} whose config is {@code config}. */
  static WhereaboutsNetwork network(String nad, String config) {
    String[] ref = nad.split("/");
    return NadConfigParser.parse(ref[0], ref[1], config).network().orElseThrow();
  }

  /** The whereabouts IPPool of 10.70.0.0/24 holding {@code allocations}. */
  static Pool rangePool(Allocation... allocations) {
    return new Pool("kube-system", "10.70.0.0-24", "10.70.0.0/24", List.of(allocations));
  }

  /** A cluster with these networks, pools, Pods and IPBlocks, and no reservations. */
  static WhereaboutsState state(
      List<WhereaboutsNetwork> networks,
      List<Pool> pools,
      Map<String, LivePod> pods,
      Map<String, IPBlock> blocks) {
    return new WhereaboutsState(
        networks, List.of(), List.of(), pools, List.of(), pods, Map.of(), blocks, Map.of());
  }
}
