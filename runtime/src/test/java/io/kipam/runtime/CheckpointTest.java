package io.kipam.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointTest {

  @TempDir Path dir;

  @Test
  void doesNothingWhenNoStepIsHeld() {
    Checkpoint.fromEnv(Map.of()).arrive("operator-asked", "p");
    Checkpoint.fromEnv(Map.of(Checkpoint.HOLD_AT, "")).arrive("operator-asked", "p");
  }

  @Test
  void passesAStepOtherThanTheHeldOne() {
    Path file = dir.resolve("held");
    Checkpoint.fromEnv(
            Map.of(Checkpoint.HOLD_AT, "daemon-closed", Checkpoint.HOLD_FILE, file.toString()))
        .arrive("operator-asked", "p");
    assertThat(file).doesNotExist();
  }

  @Test
  void parksAtTheHeldStepForGoodAfterWritingItsName() {
    Path file = dir.resolve("held");
    Checkpoint checkpoint =
        Checkpoint.fromEnv(
            Map.of(Checkpoint.HOLD_AT, "daemon-closed", Checkpoint.HOLD_FILE, file.toString()));
    Thread thread = new Thread(() -> checkpoint.arrive("daemon-closed", "p"));
    thread.setDaemon(true); // parked for good: it must not keep the test JVM alive
    thread.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(file));
    assertThat(file).hasContent("daemon-closed");
    thread.interrupt();
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(5))
        .until(() -> thread.isAlive() && thread.getState() == Thread.State.WAITING);
  }

  @Test
  void aHeldStepOfAnotherPoolPasses() {
    Path file = dir.resolve("held");
    Checkpoint.fromEnv(
            Map.of(
                Checkpoint.HOLD_AT,
                "operator-asked",
                Checkpoint.HOLD_FILE,
                file.toString(),
                Checkpoint.HOLD_POOL,
                "mine"))
        .arrive("operator-asked", "left-over-pool");
    assertThat(file).doesNotExist();
  }

  @Test
  void aHeldStepNeedsAFileToWriteTo() {
    assertThatThrownBy(() -> Checkpoint.fromEnv(Map.of(Checkpoint.HOLD_AT, "operator-asked")))
        .hasMessageContaining(Checkpoint.HOLD_FILE);
  }

  @Test
  void aPauseWritesTheStepsNameAndGoesOnAfterIt() {
    Path file = dir.resolve("held");
    Checkpoint checkpoint =
        Checkpoint.fromEnv(
            Map.of(
                Checkpoint.HOLD_AT,
                "operator-share-deciding",
                Checkpoint.HOLD_FILE,
                file.toString(),
                Checkpoint.HOLD_MILLIS,
                "300"));
    long start = System.nanoTime();
    checkpoint.arrive("operator-share-deciding", "p");
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isGreaterThanOrEqualTo(Duration.ofMillis(300));
    assertThat(file).hasContent("operator-share-deciding");
  }

  @Test
  void aPauseThatIsNoNumberIsRefusedByName() {
    assertThatThrownBy(
            () ->
                Checkpoint.fromEnv(
                    Map.of(
                        Checkpoint.HOLD_AT,
                        "operator-asked",
                        Checkpoint.HOLD_FILE,
                        dir.resolve("held").toString(),
                        Checkpoint.HOLD_MILLIS,
                        "3s")))
        .hasMessageContaining(Checkpoint.HOLD_MILLIS)
        .hasMessageContaining("'3s'");
  }
}
