package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.IPPoolStatus;
import io.kipam.node.alloc.PoolView;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PoolPolicyTest {

  private static final Instant T = Instant.parse("2026-01-01T00:00:00Z");

  private static IPPool pool(String countedAt) {
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName("p").withUid("u").withGeneration(1L).build());
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr("10.0.0.0/26");
    spec.setBlockSize(28);
    pool.setSpec(spec);
    IPPoolStatus status = new IPPoolStatus();
    status.setObservedGeneration(1L);
    status.setAvailable("0");
    status.setCountedAt(countedAt);
    status.setConditions(
        List.of(new ConditionBuilder().withType("Ready").withStatus("True").build()));
    pool.setStatus(status);
    return pool;
  }

  private static PoolView usable(PoolPolicy policy, IPPool pool) throws Exception {
    return policy.usable(pool, Map.of(), "ns", Map::of);
  }

  @Test
  void theViewCarriesWhenThePoolWasCountedAndWhenThisNodeLastChangedIt() throws Exception {
    PoolPolicy policy = new PoolPolicy(false, Clock.fixed(T.plusSeconds(3), ZoneOffset.UTC));

    PoolView before = usable(policy, pool("2026-01-01T00:00:01.500Z"));
    assertThat(before.available()).isEqualTo(BigInteger.ZERO);
    assertThat(before.countedAt()).isEqualTo(Instant.parse("2026-01-01T00:00:01.500Z"));
    assertThat(before.lastChange()).as("nothing changed here since the start").isNull();

    policy.changed("p");
    PoolView after = usable(policy, pool("2026-01-01T00:00:01.500Z"));
    assertThat(after.lastChange()).isEqualTo(T.plusSeconds(3));
    policy.changed("other");
    assertThat(usable(policy, pool(null)).countedAt()).as("not counted").isNull();
    assertThat(usable(policy, pool("soon")).countedAt()).as("unreadable").isNull();
  }
}
