package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.cni.spec.Attachment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Nodes sharing one {@link FakeStore} and its {@link FakeBlockStatus}, each with its ledger,
 * allocator, release responder and status reporter, for tests of the node's blocks. Pods are spread
 * over three namespaces: an IPAddress name is unique only within a namespace, so in one namespace a
 * 409 would hide every bug that gives an address to two pods.
 *
 * <p>As a JUnit 5 extension on an instance field ({@code @RegisterExtension final NodeFixture
 * fixture = new NodeFixture()}) it checks the invariants after every test.
 */
final class NodeFixture implements AfterEachCallback {

  static final String NETWORK = "net-a";
  static final Duration STATUS_PERIOD = Duration.ofSeconds(5);
  static final Duration ABANDON_AFTER = Duration.ofMinutes(5);

  final AllocatorTest.MutableClock clock = new AllocatorTest.MutableClock();
  final FakeStore store = new FakeStore();
  final FakeBlockStatus status = new FakeBlockStatus(store);
  final List<Ledger> ledgers = new ArrayList<>();

  /** One node of the fixture. */
  final class Node {
    final Ledger ledger;
    final Allocator allocator;
    final ReleaseResponder responder;
    final BlockStatusReporter reporter;

    Node(String name, long seed) {
      ledger = new Ledger(name, clock);
      ledger.markSynced();
      allocator = new Allocator(ledger, store, new Random(seed));
      responder = new ReleaseResponder(ledger, status, clock, ABANDON_AFTER);
      reporter = new BlockStatusReporter(ledger, status, clock, STATUS_PERIOD);
      ledgers.add(ledger);
      status.watchedBy(ledger);
    }

    Lease add(PoolView pool, int i) {
      return allocator
          .allocate(AddRequest.dynamic(List.of(pool), attachment(i), pod(i), NETWORK, null))
          .get(0);
    }

    void del(PoolView pool, int i) {
      allocator.release(List.of(pool.name()), attachment(i), Optional.empty());
    }

    /** This node's block of {@code pool} at {@code cidr}, as the store has it. */
    BlockRef block(String pool, Cidr cidr) {
      FakeStore.Block b = store.blocks.get(new BlockRef(pool, cidr, "").name());
      return new BlockRef(pool, cidr, b == null ? "" : b.uid());
    }
  }

  Node node(String name, long seed) {
    return new Node(name, seed);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    Invariants.check(store, ledgers);
  }

  static Attachment attachment(int i) {
    return new Attachment("container-" + i, "eth0");
  }

  static PodRef pod(int i) {
    return new PodRef("q" + Math.floorMod(i, 3), "pod-" + i, "uid-" + i);
  }
}
