package io.kipam.api.v1alpha1;

import io.kipam.api.net.PoolLayout;
import java.util.List;

/**
 * The geometry of an IPPool's spec — its CIDR, range, excludes, gateway and block size — as one
 * {@link PoolLayout}, read the same way by kipam-node and kipam-operator.
 */
public final class PoolGeometry {

  private PoolGeometry() {}

  /**
   * @throws IllegalArgumentException when the spec does not describe a pool (admission refuses such
   *     specs, so this means a CRD without its validation rules); the message says what is wrong
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
