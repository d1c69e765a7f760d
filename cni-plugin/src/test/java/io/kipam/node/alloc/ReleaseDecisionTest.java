package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.v1alpha1.ReleaseState;
import org.junit.jupiter.api.Test;

/** When a {@link ReleaseDecision} answers Ready, waits, or refuses. */
class ReleaseDecisionTest {

  private static final BlockObject BLOCK =
      new BlockObject(
          new BlockRef("p", Cidr.parse("10.0.0.0/29"), "uid-1"),
          "7",
          true,
          ReleaseState.Requested,
          "round-1",
          0L);

  @Test
  void readyWhenNothingIsInUseOrResting() {
    ReleaseDecision decision = new ReleaseDecision(BLOCK, 0, 0);
    assertThat(decision.ready()).isTrue();
    assertThat(decision.waiting()).isFalse();
  }

  @Test
  void waitingWhileOnlyRestingAddressesRemain() {
    ReleaseDecision decision = new ReleaseDecision(BLOCK, 0, 2);
    assertThat(decision.ready()).isFalse();
    assertThat(decision.waiting()).isTrue();
  }

  @Test
  void neitherWhileAnAddressIsInUse() {
    for (ReleaseDecision decision :
        new ReleaseDecision[] {
          new ReleaseDecision(BLOCK, 1, 0), new ReleaseDecision(BLOCK, 3, 4)
        }) {
      assertThat(decision.ready()).isFalse();
      assertThat(decision.waiting()).isFalse();
    }
  }
}
