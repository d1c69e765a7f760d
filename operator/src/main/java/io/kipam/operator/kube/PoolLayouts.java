package io.kipam.operator.kube;

import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPPoolSpec;
import java.util.List;

/** The geometry of a pool's spec, as kipam-node reads it. */
public final class PoolLayouts {

  private PoolLayouts() {}

  /**
   * @throws IllegalArgumentException when the spec does not describe a pool (admission refuses such
   *     specs, so this means a CRD without its validation rules)
   */
  public static PoolLayout of(IPPoolSpec spec) {
    if (spec == null) {
      throw new IllegalArgumentException("the pool has no spec");
    }
    return PoolLayout.builder()
        .cidr(spec.getCidr())
        .rangeStart(spec.getRangeStart())
        .rangeEnd(spec.getRangeEnd())
        .exclude(spec.getExclude() == null ? List.of() : spec.getExclude())
        .gateway(spec.getGateway())
        .blockSize(spec.getBlockSize())
        .build();
  }
}
