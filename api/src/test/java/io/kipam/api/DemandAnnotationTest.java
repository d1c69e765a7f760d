package io.kipam.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DemandAnnotationTest {

  @Test
  void poolsRoundTripSorted() {
    String value = DemandAnnotation.format(Set.of("pods-v6", "pods-v4"));
    assertThat(value).isEqualTo("pods-v4,pods-v6");
    assertThat(DemandAnnotation.pools(Map.of(ApiConstants.ANNOTATION_DEMAND, value)))
        .containsExactly("pods-v4", "pods-v6");
  }

  @Test
  void noAnnotationNoEmptyPartsAndNoNonNamesAreDemand() {
    assertThat(DemandAnnotation.pools(null)).isEmpty();
    assertThat(DemandAnnotation.pools(Map.of())).isEmpty();
    assertThat(DemandAnnotation.pools(Map.of(ApiConstants.ANNOTATION_DEMAND, " a , ,B_x,c.d ")))
        .containsExactly("a", "c.d");
    assertThat(DemandAnnotation.format(Set.of())).isNull();
  }

  @Test
  void aSlotEntryIsASlotNotAPool() {
    var annotations =
        java.util.Map.of(
            ApiConstants.ANNOTATION_DEMAND,
            "pods-v4,pods-v4@10.244.0.16/28,pods-v6@fd00:10::/124,bad@x/28");
    org.assertj.core.api.Assertions.assertThat(DemandAnnotation.pools(annotations))
        .containsExactly("pods-v4");
    org.assertj.core.api.Assertions.assertThat(DemandAnnotation.slots(annotations))
        .containsExactly("pods-v4@10.244.0.16/28", "pods-v6@fd00:10::/124");
    org.assertj.core.api.Assertions.assertThat(DemandAnnotation.slot("p", "10.0.0.0/28"))
        .isEqualTo("p@10.0.0.0/28");
  }

  @Test
  void theDemandCarriesWhenItWasRecorded() {
    String value =
        DemandAnnotation.format(
            Set.of("pods-v6", "pods-v4@10.0.0.16/28"), Instant.parse("2026-01-01T00:00:07.250Z"));
    assertThat(value).isEqualTo("at=2026-01-01T00:00:07Z,pods-v4@10.0.0.16/28,pods-v6");
    var annotations = Map.of(ApiConstants.ANNOTATION_DEMAND, value);
    assertThat(DemandAnnotation.pools(annotations)).containsExactly("pods-v6");
    assertThat(DemandAnnotation.slots(annotations)).containsExactly("pods-v4@10.0.0.16/28");
    assertThat(DemandAnnotation.recordedAt(annotations))
        .contains(Instant.parse("2026-01-01T00:00:07Z"));
    assertThat(DemandAnnotation.format(Set.of(), Instant.EPOCH)).isNull();
  }

  @Test
  void aValueWithoutTimeIsReadAsBefore() {
    var annotations = Map.of(ApiConstants.ANNOTATION_DEMAND, "pods-v4,pods-v6@fd00::/124");
    assertThat(DemandAnnotation.pools(annotations)).containsExactly("pods-v4");
    assertThat(DemandAnnotation.slots(annotations)).containsExactly("pods-v6@fd00::/124");
    assertThat(DemandAnnotation.recordedAt(annotations)).isEmpty();
    assertThat(DemandAnnotation.recordedAt(Map.of(ApiConstants.ANNOTATION_DEMAND, "at=soon,p")))
        .as("an unreadable time is no time")
        .isEmpty();
    assertThat(DemandAnnotation.recordedAt(null)).isEmpty();
  }
}
