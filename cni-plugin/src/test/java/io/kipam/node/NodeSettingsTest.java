package io.kipam.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NodeSettingsTest {

  /** The settings of node n1 with no other variable set. */
  private static NodeSettings unset() {
    return NodeSettings.fromEnvironment(Map.of("NODE_NAME", "n1"));
  }

  /** The settings of node n1 with {@code variable} set to {@code value}. */
  private static NodeSettings settings(String variable, String value) {
    return NodeSettings.fromEnvironment(Map.of("NODE_NAME", "n1", variable, value));
  }

  @Test
  void blockStatusIsWrittenAtMostEveryTwoSecondsUnlessSetOtherwise() {
    assertThat(unset().blockStatusPeriod()).isEqualTo(Duration.ofSeconds(2));
    assertThat(settings("KIPAM_BLOCK_STATUS_SECONDS", "30").blockStatusPeriod())
        .isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void theOrphanGraceIsAMinuteUnlessSet() {
    assertThat(unset().orphanGrace()).isEqualTo(Duration.ofSeconds(60));
    assertThat(settings("KIPAM_ORPHAN_GRACE_SECONDS", "5").orphanGrace())
        .isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void sharedSlotsAreOffUnlessSet() {
    assertThat(unset().sharedSlots()).isFalse();
    assertThat(settings("KIPAM_SHARED_SLOTS", "true").sharedSlots()).isTrue();
  }

  @Test
  void theCallPathIsNotRehearsedUnlessSet() {
    assertThat(unset().rehearsalCalls()).isZero();
    assertThat(settings("KIPAM_REHEARSAL_CALLS", "600").rehearsalCalls()).isEqualTo(600);
    assertThat(settings("KIPAM_REHEARSAL_CALLS", "1000").rehearsalCalls()).isEqualTo(1000);
  }

  @Test
  void probesAreServedOverTcpOnlyWhereAnAddressIsGiven() {
    assertThat(unset().probeAddress()).isEmpty();
    assertThat(settings("KIPAM_PROBE_ADDRESS", "127.0.0.1:9880").probeAddress())
        .hasValueSatisfying(
            a -> {
              assertThat(a.getHostString()).isEqualTo("127.0.0.1");
              assertThat(a.getPort()).isEqualTo(9880);
            });
    assertThat(settings("KIPAM_PROBE_ADDRESS", "[::1]:9880").probeAddress())
        .hasValueSatisfying(a -> assertThat(a.getHostString()).isEqualTo("::1"));
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource({
    "KIPAM_BLOCK_STATUS_SECONDS, 0, 'KIPAM_BLOCK_STATUS_SECONDS must be at least 1'",
    "KIPAM_BLOCK_STATUS_SECONDS, soon,"
        + " 'KIPAM_BLOCK_STATUS_SECONDS must be a whole number of seconds'",
    "KIPAM_ORPHAN_GRACE_SECONDS, 0, 'KIPAM_ORPHAN_GRACE_SECONDS must be at least 1'",
    "KIPAM_ORPHAN_GRACE_SECONDS, -3, 'KIPAM_ORPHAN_GRACE_SECONDS'",
    "KIPAM_SHARED_SLOTS, yes, 'KIPAM_SHARED_SLOTS must be true or false, not yes'",
    "KIPAM_REHEARSAL_CALLS, -1,"
        + " 'KIPAM_REHEARSAL_CALLS must be a whole number of at least 0, not -1'",
    "KIPAM_REHEARSAL_CALLS, many,"
        + " 'KIPAM_REHEARSAL_CALLS must be a whole number of at least 0, not many'",
  })
  void aBadValueIsRefusedNamingTheVariable(String variable, String value, String message) {
    assertThatThrownBy(() -> settings(variable, value)).hasMessageContaining(message);
  }

  @Test
  void aProbeAddressWithoutAHostOrAValidPortIsRefusedNamingTheVariable() {
    for (String bad : new String[] {"9880", ":9880", "localhost", "host:0", "host:65536", "h:x"}) {
      assertThatThrownBy(() -> settings("KIPAM_PROBE_ADDRESS", bad))
          .as(bad)
          .hasMessageContaining("KIPAM_PROBE_ADDRESS must be host:port")
          .hasMessageContaining("not " + bad);
    }
  }
}
