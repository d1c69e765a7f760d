package io.kipam.system.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The runtime retries of the system tests' helpers: a call is tried again only on the codes its
 * test names, and every answer is counted, so a false "no address left" (100) on the way to a
 * success is seen. The answers are scripted, as kipam would give them, in sequences drawn from a
 * printed seed ({@code -Dkipam.seed=N}).
 */
class RuntimeRetriesTest {

  private static final Duration LONG_ENOUGH = Duration.ofMinutes(1);

  @Test
  void aFalseNoAddressLeftIsTheAnswerWhenOnlyTryAgainLaterIsRetried() throws Exception {
    RuntimeRetries retries = new RuntimeRetries();

    CniCall.Outcome outcome =
        retries.call(answers(100, 0), RuntimeRetries.TRY_AGAIN_LATER, LONG_ENOUGH);

    assertThat(outcome.ok()).isFalse();
    assertThat(RuntimeRetries.code(outcome)).isEqualTo(100);
    assertThat(retries.seen()).isEqualTo(Map.of(100, 1));
  }

  /**
   * What the helper did before for every test (100 tried again, nothing counted): the same answers
   * end in a success. Now the 100 on the way is counted, so a test can say it was there.
   */
  @Test
  void retriedOnNoAddressLeftTheSuccessComesWithTheCountOfWhatItHid() throws Exception {
    RuntimeRetries retries = new RuntimeRetries();

    CniCall.Outcome outcome =
        retries.call(answers(100, 0), RuntimeRetries.TRY_AGAIN_OR_NONE_YET, LONG_ENOUGH);

    assertThat(outcome.ok()).isTrue();
    assertThat(retries.seen(100)).isEqualTo(1);
    assertThat(retries.seen()).isEqualTo(Map.of(0, 1, 100, 1));
  }

  /**
   * What {@code NodeRig.add} did before with a pool the daemon never sees Ready: it tried again on
   * 101 uncounted and, at its deadline, threw instead of answering. Now the 101 is the answer, and
   * every one on the way is counted; an ADD refused for another reason under 101 is not retried.
   */
  @Test
  void aPoolThatStaysNotReadyIsTheAnswerAndEveryTryIsCounted() throws Exception {
    RuntimeRetries retries = new RuntimeRetries(Duration.ZERO);
    CniCall.Outcome notReady =
        new CniCall.Outcome(1, "{\"code\":101,\"msg\":\"pool p is not Ready: no status yet\"}");

    CniCall.Outcome outcome =
        retries.call(() -> notReady, NodeRig::poolNotReadyYet, Duration.ofMillis(50));

    assertThat(RuntimeRetries.code(outcome)).isEqualTo(101);
    assertThat(retries.seen(101)).isGreaterThan(1);
    assertThat(retries.seen()).containsOnlyKeys(101);

    RuntimeRetries once = new RuntimeRetries(Duration.ZERO);
    CniCall.Outcome otherwise =
        new CniCall.Outcome(1, "{\"code\":101,\"msg\":\"pool p does not exist\"}");
    once.call(() -> otherwise, NodeRig::poolNotReadyYet, LONG_ENOUGH);
    assertThat(once.seen()).isEqualTo(Map.of(101, 1));
  }

  @Test
  void theAnswerIsTheFirstNotRetriedAndEveryAnswerIsCounted() throws Exception {
    long seed = Long.getLong("kipam.seed", System.nanoTime());
    System.out.println("RuntimeRetriesTest seed " + seed);
    Random random = new Random(seed);
    int[] codes = {0, 11, 100, 7, 101};
    for (int round = 0; round < 200; round++) {
      // Up to five answers drawn, then a success: the call always ends.
      List<Integer> scripted = new ArrayList<>();
      for (int k = random.nextInt(6); k > 0; k--) {
        scripted.add(codes[random.nextInt(codes.length)]);
      }
      scripted.add(0);
      Set<Integer> retried =
          random.nextBoolean()
              ? RuntimeRetries.TRY_AGAIN_LATER
              : RuntimeRetries.TRY_AGAIN_OR_NONE_YET;
      // The model: answers are taken until one is a success or not retried.
      int last = 0;
      Map<Integer, Integer> expected = new TreeMap<>();
      for (int code : scripted) {
        last = code;
        expected.merge(code, 1, Integer::sum);
        if (code == 0 || !retried.contains(code)) {
          break;
        }
      }
      RuntimeRetries retries = new RuntimeRetries(Duration.ZERO);

      CniCall.Outcome outcome = retries.call(answers(scripted), retried, LONG_ENOUGH);

      assertThat(RuntimeRetries.code(outcome))
          .as("round %d: %s, retried on %s", round, scripted, retried)
          .isEqualTo(last);
      assertThat(retries.seen())
          .as("round %d: %s, retried on %s", round, scripted, retried)
          .isEqualTo(expected);
    }
  }

  @Test
  void aRetriedAnswerPastTheDeadlineIsTheAnswer() throws Exception {
    RuntimeRetries retries = new RuntimeRetries();

    CniCall.Outcome outcome =
        retries.call(answers(11), RuntimeRetries.TRY_AGAIN_LATER, Duration.ofMillis(700));

    assertThat(RuntimeRetries.code(outcome)).isEqualTo(11);
    assertThat(retries.seen(11)).isBetween(2, 4); // 0 ms, 300 ms, 600 ms (and one more if slow)
  }

  /** kipam's answers in turn, the last one repeated: 0 a success, else a CNI error of that code. */
  private static java.util.function.Supplier<CniCall.Outcome> answers(int... codes) {
    List<Integer> list = new ArrayList<>();
    for (int code : codes) {
      list.add(code);
    }
    return answers(list);
  }

  private static java.util.function.Supplier<CniCall.Outcome> answers(List<Integer> codes) {
    Iterator<Integer> next = codes.iterator();
    int[] last = {codes.get(codes.size() - 1)};
    return () -> {
      int code = next.hasNext() ? next.next() : last[0];
      return code == 0
          ? new CniCall.Outcome(0, "{\"cniVersion\":\"1.1.0\",\"ips\":[]}")
          : new CniCall.Outcome(
              1, "{\"cniVersion\":\"1.1.0\",\"code\":" + code + ",\"msg\":\"scripted\"}");
    };
  }
}
