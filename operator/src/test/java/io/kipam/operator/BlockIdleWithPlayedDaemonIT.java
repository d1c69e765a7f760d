package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kipam.api.v1alpha1.BlockRelease;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.testing.BesideTheSuite;
import io.kipam.testing.Fixtures;
import io.kipam.testing.ProductDefaults;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An empty block is asked for once it has been empty for {@code KIPAM_BLOCK_IDLE_SECONDS}, and not
 * before; its node's Ready answer then gives it back. The family "kipam-operator block idle": 3 s,
 * and the default (five minutes), so the class runs beside the rest of the suite on a control plane
 * of its own ({@link OwnControlPlane}). The daemon is played ({@link Kipam}): its report of an
 * empty block and its Ready answer, written with kipam-node's own writers.
 */
@BesideTheSuite
class BlockIdleWithPlayedDaemonIT {

  private static final Duration WITHIN = Duration.ofSeconds(30);
  private static final AtomicInteger SUBNET = new AtomicInteger();
  @RegisterExtension static final OwnControlPlane CLUSTER = new OwnControlPlane();

  /** How long a block must have been empty before it is asked for: 3 s, and the default. */
  static Stream<Named<Map<String, String>>> blockIdle() {
    return ProductDefaults.timerFamily(
        "kipam-operator block idle", "block idle 3 s", Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3"));
  }

  private static BlockRelease release(String block) {
    IPBlock current = CLUSTER.kipam.block(block);
    return current == null || current.getStatus() == null ? null : current.getStatus().getRelease();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("blockIdle")
  void anEmptyBlockIsAskedForOnlyOnceItHasBeenEmptyForTheIdleDelay(Map<String, String> idle)
      throws Exception {
    Duration delay = CLUSTER.startOperator(idle).blockIdleDelay();
    String base = "10.71." + SUBNET.incrementAndGet();
    IPPool pool = CLUSTER.kipam.checkedPool(Fixtures.uniqueName("idle"), base + ".0/24", WITHIN);
    String name =
        CLUSTER.kipam.claimBlock(pool, base + ".0/28", CLUSTER.node).getMetadata().getName();
    long reported = System.nanoTime();
    CLUSTER.kipam.reportAllocated(name, 0);

    await()
        .during(delay.minusSeconds(1))
        .atMost(delay.plus(WITHIN))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> release(name) == null);
    await()
        .atMost(WITHIN)
        .until(() -> release(name) != null && release(name).getState() == ReleaseState.Requested);
    Duration asked = Duration.ofNanos(System.nanoTime() - reported);
    System.out.printf(
        "the empty block asked for %.1f s after its node reported it empty (idle delay %s)%n",
        asked.toMillis() / 1e3, delay);
    assertThat(asked).as("asked for before the idle delay").isGreaterThanOrEqualTo(delay);
    assertThat(release(name).getReason()).contains(delay.toSeconds() + "s");

    CLUSTER.kipam.answer(name, ReleaseState.Ready, "empty");
    await().atMost(WITHIN).until(() -> CLUSTER.kipam.block(name) == null);
  }
}
