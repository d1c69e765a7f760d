package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.ResourceNames;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What must hold after every allocator operation, across all nodes sharing one store and across all
 * namespaces: one holder per address, nodes allocate only in their own blocks, every lease is
 * stored, and nothing stored is unknown to its node (no leak).
 */
final class Invariants {

  private Invariants() {}

  static void check(FakeStore store, List<Ledger> ledgers) {
    Map<AddressKey, Lease> byAddress = new HashMap<>();
    Set<String> namespaces = new HashSet<>();
    for (Lease stored : store.addresses.values()) {
      namespaces.add(stored.pod().namespace());
      Lease previous = byAddress.put(stored.address(), stored);
      assertThat(previous)
          .as(
              "address %s held twice: in %s and in %s",
              stored.ip(),
              stored.pod().namespace(),
              previous == null ? "" : previous.pod().namespace())
          .isNull();
      FakeStore.Block block = store.blocks.get(stored.blockName());
      assertThat(block).as("block of %s is claimed", stored.ip()).isNotNull();
      assertThat(block.node())
          .as("%s is in its node's block", stored.ip())
          .isEqualTo(stored.node());
      if (block.shared()) {
        // A slot converted to Shared: its former holder keeps its addresses through sub-claims.
        FakeStore.Block subClaim =
            store.blocks.get(ResourceNames.subClaimName(stored.pool(), stored.ip()));
        assertThat(subClaim)
            .as("%s of a converted slot is held through a sub-claim", stored.ip())
            .isNotNull();
        assertThat(subClaim.node()).as("the sub-claim of %s", stored.ip()).isEqualTo(stored.node());
      }
    }
    int leases = 0;
    for (Ledger ledger : ledgers) {
      assertThat(ledger.sizes().get("reserved")).as("nothing left reserved").isZero();
      for (Lease lease : ledger.leases()) {
        leases++;
        Lease stored = byAddress.get(lease.address());
        assertThat(stored)
            .as("lease %s of %s is stored", lease.ip(), ledger.node())
            .isEqualTo(lease);
      }
    }
    assertThat(leases)
        .as("nothing stored is unknown to its node (no leak)")
        .isEqualTo(store.addresses.size());
  }
}
