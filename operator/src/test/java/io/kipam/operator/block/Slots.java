package io.kipam.operator.block;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;
import io.kipam.api.v1alpha1.ReleaseState;
import java.util.ArrayList;
import java.util.List;

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

  /**
   * The first slots of {@link #LAYOUT} in order, one per {@code node:allocated} holding: {@code
   * slots("a:15 b:0")} is 10.0.0.0/28 on a with 15 addresses and 10.0.0.16/28 on b, empty. The list
   * may be added to.
   */
  static List<IPBlock> slots(String holdings) {
    List<IPBlock> slots = new ArrayList<>();
    for (String holding : holdings.split(" ")) {
      String[] nodeAndAllocated = holding.split(":");
      slots.add(
          block(
              "10.0.0." + 16 * slots.size() + "/28",
              nodeAndAllocated[0],
              Long.parseLong(nodeAndAllocated[1])));
    }
    return slots;
  }

  /** {@code block}, in a release round left at {@code state}. */
  static IPBlock inRound(IPBlock block, ReleaseState state) {
    BlockRelease release = new BlockRelease();
    release.setState(state);
    block.getStatus().setRelease(release);
    return block;
  }

  /** A sub-claim of address {@code ip} for {@code node} in slot {@code parent}, holding it. */
  static IPBlock subClaim(String ip, String node, IPBlock parent) {
    IPBlock sub = block(ip + "/32", node, 1);
    sub.getSpec().setParent(parent.getMetadata().getName());
    return sub;
  }
}
