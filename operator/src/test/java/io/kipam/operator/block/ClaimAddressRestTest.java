package io.kipam.operator.block;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.v1alpha1.ClaimReference;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ClaimAddressRestTest {

  private static final Instant DELETED = Instant.parse("2026-01-01T00:00:00Z");

  private static IPBlock subClaim(ClaimReference claim, Instant deleted) {
    IPBlock block = new IPBlock();
    block.setMetadata(
        new ObjectMetaBuilder()
            .withName("p.10-0-0-5-32")
            .withUid("u1")
            .withDeletionTimestamp(deleted == null ? null : deleted.toString())
            .build());
    block.setSpec(
        claim == null
            ? new IPBlockSpec("p", "10.0.0.5/32", "node-a")
            : IPBlockSpec.claimed("p", "10.0.0.5/32", "p.10-0-0-0-28", claim));
    return block;
  }

  private static IPBlock deletedClaimSubClaim() {
    return subClaim(new ClaimReference("tenant", "vm-a.pods", "c1"), DELETED);
  }

  private static Optional<IPPool> pool(Integer reuseDelaySeconds) {
    IPPool pool = new IPPool();
    IPPoolSpec spec = new IPPoolSpec();
    spec.setReuseDelaySeconds(reuseDelaySeconds);
    pool.setSpec(spec);
    return Optional.of(pool);
  }

  @Test
  void aDeletedClaimsAddressRestsForThePoolsReuseDelayFromItsDeletion() {
    IPBlock block = deletedClaimSubClaim();

    assertThat(ClaimAddressRest.remaining(block, pool(15), DELETED))
        .hasValue(Duration.ofSeconds(15));
    assertThat(ClaimAddressRest.remaining(block, pool(15), DELETED.plusSeconds(10)))
        .hasValue(Duration.ofSeconds(5));
    assertThat(ClaimAddressRest.remaining(block, pool(15), DELETED.plusSeconds(15))).isEmpty();
    assertThat(ClaimAddressRest.remaining(block, pool(15), DELETED.plusSeconds(60))).isEmpty();
  }

  @Test
  void aPoolWithoutReuseDelaySecondsRestsItThirtySeconds() {
    IPBlock block = deletedClaimSubClaim();

    assertThat(ClaimAddressRest.remaining(block, pool(null), DELETED.plusSeconds(1)))
        .hasValue(Duration.ofSeconds(29));
    assertThat(ClaimAddressRest.remaining(block, Optional.empty(), DELETED.plusSeconds(1)))
        .hasValue(Duration.ofSeconds(29));
    assertThat(ClaimAddressRest.remaining(block, pool(null), DELETED.plusSeconds(30))).isEmpty();
  }

  @Test
  void aReuseDelayOfZeroLetsTheAddressGoAtOnce() {
    assertThat(ClaimAddressRest.remaining(deletedClaimSubClaim(), pool(0), DELETED)).isEmpty();
  }

  @Test
  void onlyTheSubClaimOfAClaimBeingDeletedRests() {
    ClaimReference claim = new ClaimReference("tenant", "vm-a.pods", "c1");

    // A node's sub-claim given back on DEL rested on the node already.
    assertThat(ClaimAddressRest.remaining(subClaim(null, DELETED), pool(15), DELETED)).isEmpty();
    // A claim's sub-claim not being deleted holds its address anyway.
    assertThat(ClaimAddressRest.remaining(subClaim(claim, null), pool(15), DELETED)).isEmpty();
  }

  @Test
  void theDeletionTimestampIsReadWithAnyOffset() {
    IPBlock block = deletedClaimSubClaim();
    block.getMetadata().setDeletionTimestamp("2026-01-01T01:00:00+01:00");

    assertThat(ClaimAddressRest.remaining(block, pool(15), DELETED.plusSeconds(5)))
        .hasValue(Duration.ofSeconds(10));
  }
}
