package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.ApiConstants;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PoolDemandTest {

  private Instant now = Instant.parse("2026-01-01T00:00:00Z");
  private final Clock clock =
      new Clock() {
        @Override
        public ZoneOffset getZone() {
          return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
          return this;
        }

        @Override
        public Instant instant() {
          return now;
        }
      };
  private final PoolDemand demand = new PoolDemand(null, "node-a", clock, null);

  @Test
  void aShortPoolIsRecordedUntilServedOrUntilNoAddHasFoundItShortForAMinute() {
    assertThat(demand.wanted()).as("nothing short, nothing written").isNull();
    demand.shortOf("pods-v6");
    demand.shortOf("pods-v4");
    assertThat(demand.wanted()).isEqualTo("pods-v4,pods-v6");

    demand.served("pods-v4");
    assertThat(demand.wanted()).isEqualTo("pods-v6");

    now = now.plus(PoolDemand.EXPIRES).plus(Duration.ofSeconds(1));
    assertThat(demand.wanted()).as("the runtime gave up").isNull();
  }

  private static Map<String, String> carrying(String value) {
    return value == null ? Map.of() : Map.of(ApiConstants.ANNOTATION_DEMAND, value);
  }

  @Test
  void theDemandCarriesItsTimeAndIsRefreshedWhileShort() {
    demand.shortOf("pods-v4");
    assertThat(demand.value()).isEqualTo("at=2026-01-01T00:00:00Z,pods-v4");
    assertThat(demand.due(carrying(null))).as("not recorded yet").isTrue();
    assertThat(demand.due(carrying(demand.value()))).as("recorded just now").isFalse();
    assertThat(demand.due(carrying("pods-v4"))).as("recorded without a time").isTrue();
    String written = demand.value();

    now = now.plus(PoolDemand.REFRESH).minusSeconds(1);
    demand.shortOf("pods-v4");
    assertThat(demand.due(carrying(written))).isFalse();
    now = now.plusSeconds(1);
    assertThat(demand.due(carrying(written)))
        .as("still short: its time is renewed, so kipam-operator sees a live daemon")
        .isTrue();
    assertThat(demand.value()).isEqualTo("at=2026-01-01T00:00:30Z,pods-v4");

    demand.shortOf("pods-v6");
    assertThat(demand.due(carrying(demand.value()))).isFalse();
    assertThat(demand.due(carrying(written))).as("another pool").isTrue();

    demand.served("pods-v4");
    demand.served("pods-v6");
    assertThat(demand.value()).isNull();
    assertThat(demand.due(carrying(written))).as("served: the annotation goes").isTrue();
    assertThat(demand.due(carrying(null))).isFalse();
  }
}
