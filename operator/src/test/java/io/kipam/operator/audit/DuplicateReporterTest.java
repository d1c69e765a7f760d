package io.kipam.operator.audit;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.operator.audit.Duplicates.Holder;
import io.kipam.operator.audit.Duplicates.Slot;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class DuplicateReporterTest {

  @Test
  void theSentenceNamesTheAddressAndEveryHolderWithItsPool() {
    String sentence =
        DuplicateReporter.sentence(
            new Slot("", "10.0.0.1"),
            List.of(
                new Holder(new AddressObject("b", "p.10-0-0-1", "u2"), "p"),
                new Holder(new AddressObject("a", "p.10-0-0-1", "u1"), "p")));

    assertThat(sentence)
        .isEqualTo("10.0.0.1 is held by a/p.10-0-0-1 (pool p) and b/p.10-0-0-1 (pool p)");
  }

  @Test
  void aConditionNamesTenDuplicatesAndCountsTheRest() {
    Set<String> sentences = new TreeSet<>();
    IntStream.range(10, 22).forEach(i -> sentences.add("10.0.0." + i + " is held by x and y"));

    String message = DuplicateReporter.message(sentences);

    assertThat(message.split("; ")).hasSize(11);
    assertThat(message).endsWith("; and 2 more addresses held twice");
    assertThat(DuplicateReporter.message(Set.of("one"))).isEqualTo("one");
  }
}
