package io.kipam.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;

class VariantsTest {

  private final Variants.Family<Map<String, String>> settle =
      Variants.<Map<String, String>>family("settle")
          .shortened("settle 5 s", Map.of("KIPAM_SETTLE_SECONDS", "5"))
          .defaults(Map.of());

  private static List<String> names(List<? extends Named<?>> variants) {
    return variants.stream().map(Named::getName).toList();
  }

  @Test
  void aRunDrawsOneVariantAFamilyAndTheSameSeedDrawsTheSameOne() {
    for (long seed = 0; seed < 50; seed++) {
      List<String> drawn = names(settle.chosen(seed, "drawn"));
      assertThat(drawn).hasSize(1);
      assertThat(names(settle.chosen(seed, "drawn"))).as("seed %d again", seed).isEqualTo(drawn);
    }
  }

  @Test
  void everyVariantRunsInSomeRuns() {
    Set<String> seen = new HashSet<>();
    for (long seed = 20261128000000L; seed < 20261128000020L; seed++) {
      seen.addAll(names(settle.chosen(seed, "drawn")));
    }
    assertThat(seen).containsExactlyInAnyOrder("settle 5 s", Variants.DEFAULTS);
  }

  @Test
  void allRunsEveryVariantAndDefaultsOnlyTheProducts() {
    assertThat(names(settle.chosen(1, "all"))).containsExactly("settle 5 s", Variants.DEFAULTS);
    assertThat(names(settle.chosen(1, "defaults"))).containsExactly(Variants.DEFAULTS);
    assertThat(settle.chosen(1, "defaults").get(0).getPayload()).isEmpty();
    assertThat(names(settle.chosen(1, "shortened"))).containsExactly("settle 5 s");
  }

  @Test
  void anUnknownModeAndAFamilyWithoutItsDefaultsAreRefusedByName() {
    assertThatThrownBy(() -> settle.chosen(1, "some"))
        .hasMessageContaining("-Dkipam.variants=some")
        .hasMessageContaining("drawn (the default), all, defaults, shortened");
    assertThatThrownBy(
            () -> Variants.<String>family("lease").shortened("lease 4 s", "4").chosen(1, "drawn"))
        .hasMessageContaining("family lease needs")
        .hasMessageContaining("product's defaults");
  }
}
