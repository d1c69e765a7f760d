package io.kipam.operator.audit;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.operator.audit.Duplicates.Holder;
import io.kipam.operator.audit.Duplicates.Slot;
import org.junit.jupiter.api.Test;

class DuplicatesTest {

  private static Holder holder(String namespace, String pool) {
    return new Holder(new AddressObject(namespace, pool + ".10-0-0-1", namespace + "-uid"), pool);
  }

  /** An IPAddress of {@code pool} in {@code namespace} holding {@code ip} on {@code network}. */
  private record Held(String network, String ip, String namespace, String pool) {}

  private static Duplicates twoPasses(Held... addresses) {
    Duplicates d = new Duplicates();
    for (Held a : addresses) {
      d.see(a.network(), a.ip());
    }
    if (d.found()) {
      for (Held a : addresses) {
        d.collect(a.network(), a.ip(), holder(a.namespace(), a.pool()));
      }
    }
    return d;
  }

  @Test
  void oneAddressHeldInTwoNamespacesIsADuplicateWithBothHolders() {
    Duplicates d =
        twoPasses(
            new Held("", "10.0.0.1", "a", "p"),
            new Held("", "10.0.0.2", "a", "p"),
            new Held("", "10.0.0.1", "b", "p"));

    assertThat(d.result()).containsOnlyKeys(new Slot("", "10.0.0.1"));
    assertThat(d.result().get(new Slot("", "10.0.0.1")))
        .containsExactly(holder("a", "p"), holder("b", "p"));
  }

  @Test
  void theSameAddressInTwoNetworksIsNoDuplicate() {
    Duplicates d =
        twoPasses(new Held("red", "10.0.0.1", "a", "p1"), new Held("blue", "10.0.0.1", "b", "p2"));

    assertThat(d.found()).isFalse();
    assertThat(d.result()).isEmpty();
  }

  @Test
  void twoPoolsOfOneNetworkHoldingOneAddressAreADuplicate() {
    Duplicates d =
        twoPasses(new Held("red", "10.0.0.1", "a", "p1"), new Held("red", "10.0.0.1", "b", "p2"));

    assertThat(d.result().get(new Slot("red", "10.0.0.1"))).hasSize(2);
  }

  @Test
  void anAddressLeftWithOneHolderByTheSecondPassIsNoDuplicate() {
    Duplicates d = new Duplicates();
    d.see("", "10.0.0.1");
    d.see("", "10.0.0.1");
    d.collect("", "10.0.0.1", holder("a", "p"));

    assertThat(d.found()).isTrue();
    assertThat(d.result()).isEmpty();
  }

  @Test
  void aFirstPassStartedAgainCountsWhatItReadsAgainOnce() {
    Duplicates d = new Duplicates();
    d.see("", "10.0.0.1");
    d.see("", "10.0.0.2");
    d.forgetSeen(); // the continue token expired: the pass reads from its first page again
    d.see("", "10.0.0.1");
    d.see("", "10.0.0.2");

    assertThat(d.found()).isFalse();
  }

  @Test
  void aSecondPassStartedAgainGathersEachHolderOnce() {
    Duplicates d =
        twoPasses(new Held("", "10.0.0.1", "a", "p"), new Held("", "10.0.0.1", "b", "p"));
    d.forgetHolders();
    d.collect("", "10.0.0.1", holder("a", "p"));
    d.collect("", "10.0.0.1", holder("b", "p"));

    assertThat(d.result().get(new Slot("", "10.0.0.1")))
        .containsExactly(holder("a", "p"), holder("b", "p"));
  }

  /**
   * 150,000 distinct addresses over two networks, in a seeded random order, with a few planted
   * twice (in the last namespace): exactly the planted ones are found.
   */
  @Test
  void amongManyAddressesExactlyThePlantedDuplicatesAreFound() {
    long seed =
        Long.getLong("kipam.seed", java.util.concurrent.ThreadLocalRandom.current().nextLong());
    System.out.println("seed " + seed + " (-Dkipam.seed= repeats it)");
    java.util.Random random = new java.util.Random(seed);
    java.util.List<Held> all = new java.util.ArrayList<>();
    for (int i = 0; i < 150_000; i++) {
      String ip = "10." + (i >> 16) + "." + ((i >> 8) & 255) + "." + (i & 255);
      all.add(new Held(i % 2 == 0 ? "" : "net-b", ip, "ns-" + (i % 7), "p"));
    }
    java.util.Set<Slot> planted = new java.util.HashSet<>();
    for (int k = 0; k < 5; k++) {
      Held twin = all.get(random.nextInt(150_000));
      if (planted.add(new Slot(twin.network(), twin.ip()))) {
        all.add(new Held(twin.network(), twin.ip(), "ns-last", "p"));
      }
    }
    java.util.Collections.shuffle(all, random);

    Duplicates d = twoPasses(all.toArray(Held[]::new));

    assertThat(d.result().keySet()).isEqualTo(planted);
  }
}
