package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
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
}
