package io.kipam.operator.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SightingsTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final Duration GRACE = Duration.ofSeconds(600);
  private static final AddressObject A = new AddressObject("ns", "a", "uid-a");

  private final Sightings sightings = new Sightings(GRACE);

  @Test
  void aFirstSightingIsNeverDueEvenWithoutGrace() {
    assertThat(new Sightings(Duration.ZERO).seen(A, OrphanReason.POD, T0)).isFalse();
  }

  @Test
  void aSecondSightingIsDueOnlyOnceTheGraceHasPassed() {
    assertThat(sightings.seen(A, OrphanReason.POD, T0)).isFalse();
    assertThat(sightings.seen(A, OrphanReason.POD, T0.plusSeconds(599))).isFalse();
    assertThat(sightings.seen(A, OrphanReason.POD, T0.plusSeconds(600))).isTrue();
  }

  @Test
  void anotherReasonStartsTheGraceAgain() {
    sightings.seen(A, OrphanReason.POD, T0);
    assertThat(sightings.seen(A, OrphanReason.NODE, T0.plusSeconds(700))).isFalse();
    assertThat(sightings.seen(A, OrphanReason.NODE, T0.plusSeconds(1300))).isTrue();
  }

  @Test
  void anotherObjectOfTheSameNameIsANewCandidate() {
    sightings.seen(A, OrphanReason.POD, T0);
    AddressObject again = new AddressObject("ns", "a", "uid-b");
    assertThat(sightings.seen(again, OrphanReason.POD, T0.plusSeconds(700))).isFalse();
  }

  @Test
  void aCandidateAnAuditNoLongerSeesOrphanedIsForgotten() {
    AddressObject b = new AddressObject("ns", "b", "uid-b");
    sightings.seen(A, OrphanReason.POD, T0);
    sightings.seen(b, OrphanReason.BLOCK, T0);
    sightings.retainOnly(Set.of(b));
    assertThat(sightings.size()).isEqualTo(1);
    assertThat(sightings.seen(A, OrphanReason.POD, T0.plusSeconds(700))).isFalse();
    assertThat(sightings.seen(b, OrphanReason.BLOCK, T0.plusSeconds(700))).isTrue();
  }
}
