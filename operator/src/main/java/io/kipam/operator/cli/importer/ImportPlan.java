package io.kipam.operator.cli.importer;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.kipam.api.v1alpha1.IPPoolSpec;
import java.util.List;

/**
 * What an import would write, and what it leaves out. Pure data: {@link ImportPlanner} makes it,
 * {@link PlanText} prints it, {@link ImportWriter} writes it. {@code present} marks what kipam
 * already has exactly so (a second run plans nothing new).
 */
public record ImportPlan(
    List<PlannedPool> pools,
    List<PlannedSlot> slots,
    List<PlannedAddress> addresses,
    List<Leaked> leaked,
    List<BadInput> problems) {

  /** A kipam IPPool for one whereabouts IPPool (one range of one network). */
  public record PlannedPool(
      String name, IPPoolSpec spec, String whereaboutsPool, List<String> nads, boolean present) {}

  /**
   * A slot of a pool holding imported addresses: Exclusive to {@code node}, or Shared ({@code node}
   * null) when its imported addresses are on several nodes, each then under a sub-claim.
   */
  public record PlannedSlot(
      String pool, String name, String cidr, String node, int addresses, boolean present) {

    @JsonProperty("shared")
    public boolean shared() {
      return node == null;
    }
  }

  /**
   * An IPAddress for a live allocation. {@code block}: the slot (Exclusive) or the sub-claim
   * (Shared) it lies in; {@code subClaim} whether that block is a sub-claim to write.
   */
  public record PlannedAddress(
      String pool,
      String ip,
      String namespace,
      String name,
      String pod,
      String podUid,
      String node,
      String containerId,
      String ifName,
      String network,
      String slot,
      String block,
      String blockCidr,
      boolean subClaim,
      boolean present) {}

  /** An allocation whereabouts still records for a pod that is gone or finished. */
  public record Leaked(String source, String ip, String podRef, String containerId, String why) {}

  public long toCreate() {
    return pools.stream().filter(p -> !p.present()).count()
        + slots.stream().filter(s -> !s.present()).count()
        + addresses.stream().filter(a -> !a.present()).count()
        // a sub-claim is written with its address (and found again with it on a second run)
        + addresses.stream().filter(a -> a.subClaim() && !a.present()).count();
  }
}
