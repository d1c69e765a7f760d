package io.kipam.operator.block;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;

/** Slots of one small pool, as the operator's caches hold them, for the pressure decisions. */
final class Slots {

  /** Four /28 slots; the first and last have 15 assignable addresses, the middle two 16. */
  static final PoolLayout LAYOUT = PoolLayout.builder().cidr("10.0.0.0/26").blockSize(28).build();

  private Slots() {}

  /** A block of pool {@code p} on {@code node} reporting {@code allocated} addresses. */
  static IPBlock block(String cidr, String node, long allocated) {
    IPBlock block = new IPBlock();
    block.setMetadata(new ObjectMetaBuilder().withName("p." + cidr).withUid(cidr).build());
    block.setSpec(new IPBlockSpec("p", cidr, node));
    IPBlockStatus status = new IPBlockStatus();
    status.setAllocated(allocated);
    block.setStatus(status);
    return block;
  }
}
