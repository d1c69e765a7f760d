package io.kipam.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeSettingsTest {

  /** The settings of node n1 with {@code variable} set to {@code value}. */
  private static NodeSettings settings(String variable, String value) {
    return NodeSettings.fromEnvironment(Map.of("NODE_NAME", "n1", variable, value));
  }

  @Test
  void blockStatusIsWrittenAtMostEveryTwoSecondsUnlessSetOtherwise() {
    assertThat(NodeSettings.fromEnvironment(Map.of("NODE_NAME", "n1")).blockStatusPeriod())
        .isEqualTo(Duration.ofSeconds(2));
    assertThat(settings("KIPAM_BLOCK_STATUS_SECONDS", "30").blockStatusPeriod())
        .isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void aBlockStatusPeriodBelowOneSecondIsRefusedNamingTheVariable() {
    assertThatThrownBy(() -> settings("KIPAM_BLOCK_STATUS_SECONDS", "0"))
        .hasMessageContaining("KIPAM_BLOCK_STATUS_SECONDS must be at least 1");
    assertThatThrownBy(() -> settings("KIPAM_BLOCK_STATUS_SECONDS", "soon"))
        .hasMessageContaining("KIPAM_BLOCK_STATUS_SECONDS must be a whole number of seconds");
  }

  @Test
  void theOrphanGraceIsAMinuteUnlessSetAndABadValueIsRefusedNamingTheVariable() {
    assertThat(NodeSettings.fromEnvironment(Map.of("NODE_NAME", "n1")).orphanGrace())
        .isEqualTo(Duration.ofSeconds(60));
    assertThat(settings("KIPAM_ORPHAN_GRACE_SECONDS", "5").orphanGrace())
        .isEqualTo(Duration.ofSeconds(5));
    assertThatThrownBy(() -> settings("KIPAM_ORPHAN_GRACE_SECONDS", "0"))
        .hasMessageContaining("KIPAM_ORPHAN_GRACE_SECONDS must be at least 1");
    assertThatThrownBy(() -> settings("KIPAM_ORPHAN_GRACE_SECONDS", "-3"))
        .hasMessageContaining("KIPAM_ORPHAN_GRACE_SECONDS");
  }

  @Test
  void sharedSlotsAreOffUnlessSetAndABadValueIsRefusedNamingTheVariable() {
    assertThat(NodeSettings.fromEnvironment(Map.of("NODE_NAME", "n1")).sharedSlots()).isFalse();
    assertThat(settings("KIPAM_SHARED_SLOTS", "true").sharedSlots()).isTrue();
    assertThatThrownBy(() -> settings("KIPAM_SHARED_SLOTS", "yes"))
        .hasMessageContaining("KIPAM_SHARED_SLOTS must be true or false, not yes");
  }

  @Test
  void theCallPathIsNotRehearsedUnlessSetAndABadValueIsRefusedNamingTheVariable() {
    assertThat(NodeSettings.fromEnvironment(Map.of("NODE_NAME", "n1")).rehearsalCalls()).isZero();
    assertThat(settings("KIPAM_REHEARSAL_CALLS", "600").rehearsalCalls()).isEqualTo(600);
    assertThat(settings("KIPAM_REHEARSAL_CALLS", "1000").rehearsalCalls()).isEqualTo(1000);
    assertThatThrownBy(() -> settings("KIPAM_REHEARSAL_CALLS", "-1"))
        .hasMessageContaining("KIPAM_REHEARSAL_CALLS must be a whole number of at least 0, not -1");
    assertThatThrownBy(() -> settings("KIPAM_REHEARSAL_CALLS", "many"))
        .hasMessageContaining(
            "KIPAM_REHEARSAL_CALLS must be a whole number of at least 0, not many");
  }

  @Test
  void probesAreServedOverTcpOnlyWhereAnAddressIsGiven() {
    assertThat(NodeSettings.fromEnvironment(Map.of("NODE_NAME", "n1")).probeAddress()).isEmpty();
    assertThat(settings("KIPAM_PROBE_ADDRESS", "127.0.0.1:9880").probeAddress())
        .hasValueSatisfying(
            a -> {
              assertThat(a.getHostString()).isEqualTo("127.0.0.1");
              assertThat(a.getPort()).isEqualTo(9880);
            });
    assertThat(settings("KIPAM_PROBE_ADDRESS", "[::1]:9880").probeAddress())
        .hasValueSatisfying(a -> assertThat(a.getHostString()).isEqualTo("::1"));
  }

  @Test
  void aProbeAddressWithoutAHostOrAValidPortIsRefusedNamingTheVariable() {
    for (String bad : new String[] {"9880", ":9880", "localhost", "host:0", "host:65536", "h:x"}) {
      assertThatThrownBy(
              () ->
                  NodeSettings.fromEnvironment(
                      Map.of("NODE_NAME", "n1", "KIPAM_PROBE_ADDRESS", bad)))
          .as(bad)
          .hasMessageContaining("KIPAM_PROBE_ADDRESS must be host:port")
          .hasMessageContaining("not " + bad);
    }
  }
}
