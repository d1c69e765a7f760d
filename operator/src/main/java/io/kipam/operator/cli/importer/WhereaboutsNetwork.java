package io.kipam.operator.cli.importer;

import java.util.List;

/**
 * A NetworkAttachmentDefinition whose IPAM is whereabouts.
 *
 * @param nad {@code namespace/name} of the NetworkAttachmentDefinition
 * @param cniName the CNI configuration's {@code name}, which kipam records as an address's network
 * @param networkName whereabouts' {@code network_name}; empty when not set
 * @param ranges its ranges, in order
 */
public record WhereaboutsNetwork(
    String nad, String cniName, String networkName, List<WhereaboutsRange> ranges) {}
