package io.kipam.operator.cli.importer;

import java.util.List;

/**
 * A NetworkAttachmentDefinition whose IPAM is already kipam: after the switch, it tells a later
 * import which kipam pools its network uses and under which CNI name, so whereabouts' allocations
 * made during the switch still go into the right pool.
 *
 * @param nad {@code namespace/name}
 * @param cniName the configuration's {@code name}
 * @param pools {@code ipam.pools}
 */
public record SwitchedNetwork(String nad, String cniName, List<String> pools) {}
