package io.kipam.operator.cli.importer;

import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import java.util.List;
import java.util.Map;

/**
 * Everything the import reads, before it decides anything: whereabouts' records, the pods they
 * name, and what kipam already has of the pools it would write (so a second run sees its first).
 *
 * @param networks the NetworkAttachmentDefinitions whose IPAM is whereabouts, read without problem
 * @param switched the NetworkAttachmentDefinitions whose IPAM is kipam already
 * @param problems what could not be read
 * @param pools whereabouts' IPPools in its namespace
 * @param reservations whereabouts' OverlappingRangeIPReservations in its namespace
 * @param pods the pods, by {@code namespace/name}
 * @param kipamPools kipam's IPPools, by name
 * @param kipamBlocks kipam's IPBlocks, by name
 * @param kipamAddresses kipam's IPAddresses, by {@code namespace/name}
 */
public record WhereaboutsState(
    List<WhereaboutsNetwork> networks,
    List<SwitchedNetwork> switched,
    List<BadInput> problems,
    List<Pool> pools,
    List<Reservation> reservations,
    Map<String, LivePod> pods,
    Map<String, IPPool> kipamPools,
    Map<String, IPBlock> kipamBlocks,
    Map<String, IPAddress> kipamAddresses) {

  /** One allocation of a whereabouts IPPool: {@code spec.allocations[offset]}. */
  public record Allocation(String offset, String containerId, String podRef, String ifName) {}

  /** A whereabouts IPPool ({@code whereabouts.cni.cncf.io/v1alpha1}). */
  public record Pool(String namespace, String name, String range, List<Allocation> allocations) {}

  /** A whereabouts OverlappingRangeIPReservation: its name is the address. */
  public record Reservation(
      String namespace, String name, String containerId, String podRef, String ifName) {}

  /** A pod as the import needs it. {@code finished}: phase Succeeded or Failed. */
  public record LivePod(
      String namespace, String name, String uid, String node, String phase, boolean finished) {}
}
