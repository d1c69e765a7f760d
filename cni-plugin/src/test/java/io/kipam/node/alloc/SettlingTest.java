package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kipam.api.net.PoolLayout;
import io.kipam.cni.spec.Attachment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link Settling} on a real {@link Ledger} and the fake store: an uncertain address is made by an
 * ADD whose create answer is lost, then settled by a fresh read, as the allocator's background
 * settling and a retried ADD do.
 */
class SettlingTest {

  private static final PoolView POOL =
      new PoolView(
          "p4", PoolLayout.builder().cidr("10.0.0.0/29").blockSize(29).build(), Duration.ZERO, 0);
  private static final Duration SETTLE_AFTER = Duration.ofSeconds(30);

  private final AllocatorTest.MutableClock clock = new AllocatorTest.MutableClock();
  private final FakeStore store = new FakeStore();
  private final Ledger ledger = new Ledger("node-a", clock);
  private final Allocator allocator =
      new Allocator(ledger, store, Allocator.NO_CLAIMS, null, new Random(7), SETTLE_AFTER);
  private final List<Lease> released = new ArrayList<>();
  private final Settling settling =
      new Settling(ledger, store, SETTLE_AFTER, new KeyedLocks<>(), released::add);

  SettlingTest() {
    ledger.markSynced();
  }

  private static Attachment attachment(int i) {
    return new Attachment("container-" + i, "eth0");
  }

  private static PodRef pod(int i) {
    return new PodRef("q" + i % 3, "pod-" + i, "uid-" + i);
  }

  /** An ADD of pod {@code i} whose create may or may not have happened. */
  private Lease lostWrite(int i, boolean happened) {
    if (happened) {
      store.lostAnswers = 1.0;
    } else {
      store.lostRequests = true;
    }
    assertThatThrownBy(
            () ->
                allocator.allocate(
                    AddRequest.dynamic(List.of(POOL), attachment(i), pod(i), "net", null)))
        .isInstanceOf(WriteOutcomeUnknownException.class);
    store.lostAnswers = 0;
    store.lostRequests = false;
    return ledger.uncertainOf("p4", attachment(i)).orElseThrow().wanted();
  }

  @Test
  void aWriteThatHappenedForAFailedAddIsReleasedAndSettled() {
    lostWrite(0, true);

    settling.settle(Duration.ZERO);

    assertThat(released).singleElement().satisfies(l -> assertThat(l.pod()).isEqualTo(pod(0)));
    assertThat(ledger.sizes().get("uncertain")).isZero();
  }

  @Test
  void aWriteThatNeverHappenedIsSettledWithNothingToRelease() {
    lostWrite(1, false);

    settling.settle(Duration.ZERO);

    assertThat(released).isEmpty();
    assertThat(ledger.sizes().get("uncertain")).isZero();
  }

  @Test
  void anAddressTheApiCannotReadStaysUncertain() {
    lostWrite(2, true);
    store.failWrites = true;

    settling.settle(Duration.ZERO);

    assertThat(released).isEmpty();
    assertThat(ledger.sizes().get("uncertain")).isOne();
  }

  @Test
  void aRetriedAddGetsTheObjectItsLostAnswerCreated() {
    Lease wanted = lostWrite(3, true);

    Optional<Lease> earlier = settling.earlierAttempt(POOL, attachment(3), "uid-3");

    assertThat(earlier).hasValueSatisfying(l -> assertThat(l.ip()).isEqualTo(wanted.ip()));
    assertThat(settling.earlierAttempt(POOL, attachment(4), "uid-4")).isEmpty();
  }

  @Test
  void aRetryWhileTheEarlierWriteMayStillLandIsToldToTryAgainThenAllocatesAfresh() {
    lostWrite(5, false);

    assertThatThrownBy(() -> settling.earlierAttempt(POOL, attachment(5), "uid-5"))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("may still be writing address");
    clock.advance(SETTLE_AFTER);

    assertThat(settling.earlierAttempt(POOL, attachment(5), "uid-5")).isEmpty();
    assertThat(ledger.sizes().get("uncertain")).isZero();
  }

  /**
   * The background settling lists the uncertain writes, then waits for each attachment's lock; a
   * retried ADD holding that lock finds the lost write's object and returns it to the runtime. Once
   * the settling gets the lock, that write is no longer uncertain: the address is the attachment's,
   * and the settling must not delete it as a failed ADD's leftover (it did, and the address went to
   * another pod a second later while the first one had it).
   */
  @Test
  void aSettlingThatWaitedForARetriedAddLeavesTheAddressTheAddReturned() throws Exception {
    Lease wanted = lostWrite(6, true);
    clock.advance(SETTLE_AFTER);
    java.util.concurrent.CountDownLatch reading = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch goOn = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean first =
        new java.util.concurrent.atomic.AtomicBoolean();
    store.onRead =
        lease -> {
          if (first.compareAndSet(false, true)) {
            reading.countDown();
            try {
              goOn.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        };
    java.util.concurrent.ExecutorService threads =
        java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      // The retried ADD holds the attachment's lock while it reads the lost write's object.
      java.util.concurrent.Future<List<Lease>> retried =
          threads.submit(
              () ->
                  allocator.allocate(
                      AddRequest.dynamic(List.of(POOL), attachment(6), pod(6), "net", null)));
      reading.await();
      // The settling has listed the write as uncertain and waits for the same lock.
      Thread[] settler = new Thread[1];
      java.util.concurrent.Future<?> settled =
          threads.submit(
              () -> {
                settler[0] = Thread.currentThread();
                allocator.settle(Duration.ZERO);
              });
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> settler[0] != null && settler[0].getState() == Thread.State.WAITING);
      goOn.countDown();

      List<Lease> given = retried.get(10, java.util.concurrent.TimeUnit.SECONDS);
      settled.get(10, java.util.concurrent.TimeUnit.SECONDS);

      assertThat(given).singleElement().satisfies(l -> assertThat(l.ip()).isEqualTo(wanted.ip()));
      assertThat(store.readAddress(wanted))
          .as("the object of the address the retried ADD returned is still there")
          .isPresent();
      assertThat(ledger.leaseOf("p4", attachment(6)))
          .as("and the node still knows the attachment holds it")
          .hasValueSatisfying(l -> assertThat(l.ip()).isEqualTo(wanted.ip()));
    } finally {
      threads.shutdownNow();
    }
  }
}
