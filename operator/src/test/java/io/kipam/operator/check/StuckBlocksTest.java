package io.kipam.operator.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.operator.audit.OrphanRules;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class StuckBlocksTest {

  private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");

  private static final OrphanRules.Facts ONLY_N1 =
      new OrphanRules.Facts() {
        @Override
        public Optional<String> podUid(String node, String namespace, String name) {
          return Optional.empty();
        }

        @Override
        public boolean blockExists(String name) {
          return true;
        }

        @Override
        public boolean nodeExists(String name) {
          return "n1".equals(name);
        }
      };

  private static IPBlock block(String node) {
    IPBlock block = new IPBlock();
    block.setMetadata(new ObjectMetaBuilder().withName("b").build());
    block.setSpec(new IPBlockSpec("p", "10.0.0.0/28", node));
    return block;
  }

  private static Optional<CheckReport.Problem> stuck(IPBlock block) {
    return ClusterCheck.stuck(block, ONLY_N1, NOW);
  }

  @Test
  void aBlockOfAnExistingNodeOrOfNoNodeIsNotStuck() {
    assertThat(stuck(block("n1"))).isEmpty();
    assertThat(stuck(block(null))).isEmpty();
  }

  @Test
  void aBlockOfANodeThatDoesNotExistIsStuck() {
    assertThat(stuck(block("n2")))
        .contains(new CheckReport.StuckBlock("p", "b", "n2", "its Node n2 does not exist"));
  }

  @Test
  void aBlockBeingDeletedIsStuckOnlyAfterTenMinutes() {
    IPBlock recent = block("n1");
    recent.getMetadata().setDeletionTimestamp(NOW.minus(Duration.ofMinutes(9)).toString());
    IPBlock old = block("n1");
    old.getMetadata().setDeletionTimestamp(NOW.minus(Duration.ofMinutes(11)).toString());

    assertThat(stuck(recent)).isEmpty();
    assertThat(stuck(old))
        .hasValueSatisfying(
            p -> assertThat(((CheckReport.StuckBlock) p).detail()).contains("being deleted since"));
  }

  @Test
  void aReleaseRequestedLongAgoAndUnansweredIsStuck() {
    IPBlock block = block("n1");
    BlockRelease release = new BlockRelease();
    release.setState(ReleaseState.Requested);
    release.setRequestedAt(NOW.minus(Duration.ofMinutes(30)).toString());
    block.setStatus(new IPBlockStatus());
    block.getStatus().setRelease(release);

    assertThat(stuck(block))
        .hasValueSatisfying(
            p -> assertThat(((CheckReport.StuckBlock) p).detail()).contains("release requested"));

    release.setState(ReleaseState.Refused);
    assertThat(stuck(block)).isEmpty();
  }
}
