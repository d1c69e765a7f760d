package io.kipam.operator.pool;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

class PoolOverlapsTest {

  static IPPool pool(String name, String cidr, String network, String created) {
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr(cidr);
    spec.setNetwork(network);
    IPPool pool = new IPPool();
    pool.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withUid("uid-" + name)
            .withCreationTimestamp(created)
            .build());
    pool.setSpec(spec);
    return pool;
  }

  @Test
  void theNewerOfTwoOverlappingPoolsOfOneNetworkIsRefused() {
    IPPool older = pool("b", "10.0.0.0/16", "blue", "2026-01-01T00:00:00Z");
    IPPool newer = pool("a", "10.0.5.0/24", "blue", "2026-01-01T00:00:01Z");
    List<IPPool> all = List.of(older, newer);

    assertThat(PoolOverlaps.olderOverlapping(newer, all)).contains(older);
    assertThat(PoolOverlaps.olderOverlapping(older, all)).isEmpty();
  }

  @Test
  void poolsCreatedInTheSameSecondAreOrderedByName() {
    IPPool a = pool("a", "10.0.0.0/24", null, "2026-01-01T00:00:00Z");
    IPPool b = pool("b", "10.0.0.0/24", null, "2026-01-01T00:00:00Z");

    assertThat(PoolOverlaps.olderOverlapping(b, List.of(a, b))).contains(a);
    assertThat(PoolOverlaps.olderOverlapping(a, List.of(a, b))).isEmpty();
  }

  @Test
  void poolsOfDifferentNetworksOrFamiliesOrDisjointCidrsDoNotConflict() {
    IPPool blue = pool("a", "10.0.0.0/24", "blue", "2026-01-01T00:00:00Z");
    assertThat(PoolOverlaps.conflict(blue, pool("b", "10.0.0.0/24", "red", "2026-01-01T00:00:00Z")))
        .isFalse();
    assertThat(
            PoolOverlaps.conflict(blue, pool("c", "10.0.1.0/24", "blue", "2026-01-01T00:00:00Z")))
        .isFalse();
    assertThat(PoolOverlaps.conflict(blue, pool("d", "fd00::/64", "blue", "2026-01-01T00:00:00Z")))
        .isFalse();
    assertThat(PoolOverlaps.conflict(blue, blue))
        .as("a pool does not conflict with itself")
        .isFalse();
  }

  @Test
  void anAbsentNetworkIsOneNetworkOfItsOwn() {
    IPPool plain = pool("a", "10.0.0.0/24", null, "2026-01-01T00:00:00Z");
    assertThat(
            PoolOverlaps.conflict(plain, pool("b", "10.0.0.128/25", null, "2026-01-01T00:00:01Z")))
        .isTrue();
    assertThat(
            PoolOverlaps.conflict(
                plain, pool("c", "10.0.0.128/25", "blue", "2026-01-01T00:00:01Z")))
        .isFalse();
  }

  @Test
  void aPoolIsRefusedEvenWhenTheOlderPoolItOverlapsIsItselfRefused() {
    IPPool first = pool("a", "10.0.0.0/24", null, "2026-01-01T00:00:00Z");
    IPPool second = pool("b", "10.0.0.0/16", null, "2026-01-01T00:00:01Z");
    IPPool third = pool("c", "10.0.1.0/24", null, "2026-01-01T00:00:02Z");
    List<IPPool> all = List.of(first, second, third);

    assertThat(PoolOverlaps.olderOverlapping(second, all)).contains(first);
    assertThat(PoolOverlaps.olderOverlapping(third, all)).contains(second);
  }
}
