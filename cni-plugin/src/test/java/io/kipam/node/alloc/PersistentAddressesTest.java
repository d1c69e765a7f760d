package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The address of an IPAMClaim (design §5b): one per claim and pool, whatever the interleaving of
 * the nodes that attach it first, and never an address the daemon cannot vouch for.
 */
class PersistentAddressesTest {

  private static final String NETWORK = "net-a";

  private final FakeStore store = new FakeStore();
  private final FakeClaimStore claimStore = new FakeClaimStore(store);
  private final AllocatorTest.MutableClock clock = new AllocatorTest.MutableClock();
  private final PoolView v4 = AllocatorTest.pool("p4", "10.0.0.0/24", 28, 0);
  private final PoolView v6 = AllocatorTest.pool("p6", "fd00::/120", 124, 0);

  private PersistentAddresses node(String name, long seed) {
    Ledger ledger = new Ledger(name, clock);
    ledger.markSynced();
    Random random = new Random(seed);
    return new PersistentAddresses(
        ledger, store, claimStore, new BlockClaims(ledger, store, random), random, null);
  }

  /** The seeds to run: {@code -Dkipam.seed=N} for one, else a fixed set. */
  private static long[] seeds() {
    String one = System.getProperty("kipam.seed");
    return one == null || one.isBlank()
        ? LongStream.rangeClosed(1, 40).toArray()
        : new long[] {Long.parseLong(one.trim())};
  }

  @Test
  void twoNodesAttachingOneClaimFirstAgreeOnOneAddressPerPool() throws Exception {
    for (long seed : seeds()) {
      FakeStore store = new FakeStore();
      FakeClaimStore claimStore = new FakeClaimStore(store);
      Turns turns = new Turns(new Random(seed));
      System.out.printf("seed %d (rerun with -Dkipam.seed=%d)%n", seed, seed);
      claimStore.point = (call, when) -> turns.point(call + " " + when);
      Ledger ledgerA = new Ledger("node-a", clock);
      Ledger ledgerB = new Ledger("node-b", clock);
      ledgerA.markSynced();
      ledgerB.markSynced();
      Random randomA = new Random(seed * 31);
      Random randomB = new Random(seed * 31 + 1);
      PersistentAddresses a =
          new PersistentAddresses(
              ledgerA, store, claimStore, new BlockClaims(ledgerA, store, randomA), randomA, null);
      PersistentAddresses b =
          new PersistentAddresses(
              ledgerB, store, claimStore, new BlockClaims(ledgerB, store, randomB), randomB, null);
      List<ClaimStore.Claim> claims = new ArrayList<>();
      for (int n = 0; n < 3; n++) {
        claims.add(claimStore.add("q" + n, "vm-" + n + "." + NETWORK, NETWORK));
      }
      Map<String, Runnable> tasks = new LinkedHashMap<>();
      Map<String, List<IpAddress>> answers = Collections.synchronizedMap(new LinkedHashMap<>());
      Map<String, Throwable> refusals = Collections.synchronizedMap(new LinkedHashMap<>());
      for (ClaimStore.Claim claim : claims) {
        for (var node : List.of(Map.entry("node-a", a), Map.entry("node-b", b))) {
          String task = node.getKey() + " " + claim.what();
          tasks.put(
              task,
              () -> {
                try {
                  List<IpAddress> got = new ArrayList<>();
                  for (PoolView pool : List.of(v4, v6)) {
                    IpAddress ip = node.getValue().addressOf(pool, claim, Optional.empty());
                    assertThat(node.getValue().stillHeld(pool.name(), ip, claim))
                        .as("%s still holds %s after %s's answer", claim.what(), ip, task)
                        .isTrue();
                    got.add(ip);
                  }
                  answers.put(task, got);
                } catch (ClaimException e) {
                  refusals.put(task, e);
                }
              });
        }
      }
      turns.run(tasks);
      System.out.printf(
          "seed %d: %d interleaving points, %d binds lost, answers %s, refusals %s%n",
          seed, turns.points(), claimStore.bindsLost.get(), answers, refusals.keySet());
      assertThat(turns.failures()).as("seed %d", seed).isEmpty();
      for (ClaimStore.Claim claim : claims) {
        List<List<IpAddress>> got =
            answers.entrySet().stream()
                .filter(e -> e.getKey().endsWith(" " + claim.what()))
                .map(Map.Entry::getValue)
                .toList();
        assertThat(got).as("seed %d: %s served at least once", seed, claim.what()).isNotEmpty();
        assertThat(got.stream().distinct())
            .as("seed %d: every node attaches the same addresses of %s", seed, claim.what())
            .hasSize(1);
        IpAddress ip4 = got.get(0).get(0);
        IpAddress ip6 = got.get(0).get(1);
        assertThat(claimStore.subClaimsOf("p4", claim.uid()))
            .as("seed %d: the sub-claims of %s in p4", seed, claim.what())
            .containsExactly(ip4);
        assertThat(claimStore.subClaimsOf("p6", claim.uid()))
            .as("seed %d: the sub-claims of %s in p6", seed, claim.what())
            .containsExactly(ip6);
        assertThat(claimStore.stored(claim).ips())
            .as("seed %d: the status of %s", seed, claim.what())
            .containsExactlyInAnyOrder(ip4 + "/24", ip6 + "/120");
      }
      assertThat(refusals.values())
          .as("seed %d: a loser is only told to try again", seed)
          .allSatisfy(
              e ->
                  assertThat(((ClaimException) e).kind())
                      .isIn(ClaimException.Kind.TRY_AGAIN, ClaimException.Kind.IN_USE));
    }
  }

  @Test
  void aSubClaimUnderAnExclusiveSlotIsRefused() {
    Cidr slot = Cidr.parse("10.0.0.16/28");
    store.blocks.put(
        ResourceNames.blockName("p4", slot), new FakeStore.Block("node-x", UUID.randomUUID() + ""));
    IpAddress forged = IpAddress.parse("10.0.0.17");
    ClaimStore.Claim claim = claimWithSubClaim("q1", slot, forged);

    assertRefused(claim, forged, "Exclusive");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a sub-claim under another slot than its address is refused,"
        + " q2, 10.0.0.32/28, 10.0.0.17, 10.0.0.16/28",
    "a sub-claim outside the pool is refused, q0, 10.0.1.0/28, 10.0.1.5, p4",
  })
  void aSubClaimUnderASharedSlotIsRefused(
      String description, String namespace, String slot, String address, String why) {
    IpAddress forged = IpAddress.parse(address);
    ClaimStore.Claim claim = claimWithSubClaim(namespace, sharedSlot(slot), forged);

    assertRefused(claim, forged, why);
  }

  @Test
  void aSubClaimTheStatusDoesNotNameIsNotAttached() {
    Cidr slot = sharedSlot("10.0.0.32/28");
    IpAddress bound = IpAddress.parse("10.0.0.34");
    ClaimStore.Claim claim = claimWithSubClaim("q1", slot, bound);
    claimStore.setIps(claim, List.of("10.0.0.34/24"));
    IpAddress forged = IpAddress.parse("10.0.0.33");
    claimStore.forge("p4", forged, slot, claim);

    assertThat(node("node-a", 1).addressOf(v4, claim, Optional.empty())).isEqualTo(bound);
  }

  @Test
  void aStatusNamingAnAddressNoSubClaimHoldsIsRefused() {
    Cidr slot = sharedSlot("10.0.0.32/28");
    ClaimStore.Claim claim = claimStore.add("q2", "vm.net-a", NETWORK);
    claimStore.setIps(claim, List.of("10.0.0.34/24"));
    IpAddress forged = IpAddress.parse("10.0.0.33");
    claimStore.forge("p4", forged, slot, claim);

    assertThatThrownBy(() -> node("node-a", 1).addressOf(v4, claim, Optional.empty()))
        .isInstanceOf(ClaimException.class)
        .hasMessageContaining(claim.what())
        .hasMessageContaining("10.0.0.34");
  }

  @Test
  void aSubClaimLeftUnboundByACrashIsBoundByTheNextAdd() {
    Cidr slot = sharedSlot("10.0.0.32/28");
    IpAddress left = IpAddress.parse("10.0.0.40");
    ClaimStore.Claim claim = claimWithSubClaim("q0", slot, left);

    assertThat(node("node-b", 2).addressOf(v4, claim, Optional.empty())).isEqualTo(left);
    assertThat(claimStore.stored(claim).ips()).containsExactly("10.0.0.40/24");
    assertThat(claimStore.subClaimsOf("p4", claim.uid())).containsExactly(left);
  }

  private Cidr sharedSlot(String cidr) {
    Cidr slot = Cidr.parse(cidr);
    store.blocks.put(
        ResourceNames.blockName("p4", slot),
        new FakeStore.Block(null, UUID.randomUUID().toString(), null, true, false));
    return slot;
  }

  /** A claim of {@code namespace} with a sub-claim in p4 for {@code address} under {@code slot}. */
  private ClaimStore.Claim claimWithSubClaim(String namespace, Cidr slot, IpAddress address) {
    ClaimStore.Claim claim = claimStore.add(namespace, "vm.net-a", NETWORK);
    claimStore.forge("p4", address, slot, claim);
    return claim;
  }

  private void assertRefused(ClaimStore.Claim claim, IpAddress forged, String why) {
    assertThatThrownBy(() -> node("node-a", 1).addressOf(v4, claim, Optional.empty()))
        .isInstanceOf(ClaimException.class)
        .hasMessageContaining(claim.what())
        .hasMessageContaining(forged.toString())
        .hasMessageContaining(why);
  }

  /**
   * Runs tasks one at a time, each on its own thread, handing the turn on at every {@link #point}
   * to a task the seeded random picks: the same seed gives the same interleaving.
   */
  static final class Turns {
    private final Random random;
    private final List<String> live = new ArrayList<>();
    private final Map<String, Semaphore> gates = new LinkedHashMap<>();
    private final ThreadLocal<String> me = new ThreadLocal<>();
    private final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    private int points;

    Turns(Random random) {
      this.random = random;
    }

    void run(Map<String, Runnable> tasks) throws InterruptedException {
      List<Thread> threads = new ArrayList<>();
      synchronized (this) {
        for (String name : tasks.keySet()) {
          gates.put(name, new Semaphore(0));
          live.add(name);
        }
      }
      tasks.forEach(
          (name, task) -> {
            Thread t =
                new Thread(
                    () -> {
                      me.set(name);
                      await(name);
                      try {
                        task.run();
                      } catch (Throwable e) {
                        failures.add(e);
                      } finally {
                        finish(name);
                      }
                    },
                    name);
            threads.add(t);
            t.start();
          });
      gates.get(next()).release();
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(t.isAlive()).as("%s finished", t.getName()).isFalse();
      }
    }

    void point(String what) {
      String name = me.get();
      if (name == null) {
        return;
      }
      String next;
      synchronized (this) {
        points++;
        next = next();
      }
      if (!next.equals(name)) {
        gates.get(next).release();
        await(name);
      }
    }

    synchronized int points() {
      return points;
    }

    List<Throwable> failures() {
      return failures;
    }

    private synchronized String next() {
      return live.get(random.nextInt(live.size()));
    }

    private void finish(String name) {
      String next = null;
      synchronized (this) {
        live.remove(name);
        if (!live.isEmpty()) {
          next = next();
        }
      }
      if (next != null) {
        gates.get(next).release();
      }
    }

    private void await(String name) {
      try {
        if (!gates.get(name).tryAcquire(30, TimeUnit.SECONDS)) {
          failures.add(new AssertionError(name + " waited 30 s for its turn"));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
