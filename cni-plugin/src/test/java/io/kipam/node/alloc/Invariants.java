package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.ResourceNames;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What must hold after every allocator operation, across all nodes sharing one store. */
final class Invariants {

  private Invariants() {}

  static void check(FakeStore store, List<Ledger> ledgers) {
    Map<String, Lease> byAddress = new HashMap<>();
    for (Lease stored : store.addresses.values()) {
      Lease previous = byAddress.put(stored.pool() + "|" + stored.ip(), stored);
      assertThat(previous).as("address %s held twice", stored.ip()).isNull();
      String holder = store.blocks.get(ResourceNames.blockName(stored.pool(), stored.block()));
      assertThat(holder).as("block of %s is claimed", stored.ip()).isNotNull();
    }
    int leases = 0;
    for (Ledger ledger : ledgers) {
      for (Lease lease : ledger.leases()) {
        leases++;
        Lease stored = byAddress.get(lease.pool() + "|" + lease.ip());
        assertThat(stored)
            .as("lease %s of %s is stored", lease.ip(), ledger.node())
            .isEqualTo(lease);
        assertThat(store.blocks.get(lease.blockName()))
            .as("%s allocates only in its own blocks", ledger.node())
            .isEqualTo(ledger.node());
      }
    }
    assertThat(leases)
        .as("nothing stored is unknown to its node (no leak)")
        .isEqualTo(store.addresses.size());
  }
}
