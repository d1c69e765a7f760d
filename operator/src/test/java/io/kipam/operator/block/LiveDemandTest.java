package io.kipam.operator.block;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.ApiConstants;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LiveDemandTest {

  private static final Instant NOW = Instant.parse("2026-01-01T00:10:00Z");

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "at=2026-01-01T00:10:00Z,pods-v4 | true",
        "at=2026-01-01T00:09:30Z,pods-v4 | true",
        // renewed every 30 s while short: two minutes without a renewal is a daemon gone
        "at=2026-01-01T00:08:00Z,pods-v4 | true",
        "at=2026-01-01T00:07:59Z,pods-v4 | false",
        "at=2026-01-01T00:00:00Z,pods-v4@10.0.0.16/28 | false",
        // a node's clock ahead of the operator's
        "at=2026-01-01T00:12:00Z,pods-v4 | true",
        // written by a kipam-node of an earlier version, or with a time nobody can read
        "pods-v4 | true",
        "at=later,pods-v4 | true",
      })
  void demandNotRenewedForTwoMinutesIsIgnored(String value, boolean live) {
    assertThat(LiveDemand.live(Map.of(ApiConstants.ANNOTATION_DEMAND, value), NOW)).isEqualTo(live);
  }
}
