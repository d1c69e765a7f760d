package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class OperatorSettingsTest {

  @Test
  void defaultsAreThoseTheDocumentationStates() {
    OperatorSettings s = OperatorSettings.fromEnvironment(Map.of("POD_NAME", "op-0"));

    assertThat(s.kubeconfig()).isEmpty();
    assertThat(s.metricsPort()).isEqualTo(8080);
    assertThat(s.apiQps()).isEqualTo(200);
    assertThat(s.apiBurst()).isEqualTo(400);
    assertThat(s.auditQps()).isEqualTo(20);
    assertThat(s.auditBurst()).isEqualTo(40);
    assertThat(s.requestTimeout()).isEqualTo(Duration.ofSeconds(15));
    assertThat(s.blockIdleDelay()).isEqualTo(Duration.ofMinutes(5));
    assertThat(s.releaseRetryDelay()).isEqualTo(Duration.ofMinutes(1));
    assertThat(s.leaderElection()).isTrue();
    assertThat(s.leaseName()).isEqualTo("kipam-operator");
    assertThat(s.leaseNamespace()).isEmpty();
    assertThat(s.identity()).isEqualTo("op-0");
    assertThat(s.eventNamespace()).isEqualTo("default");
    assertThat(s.auditInterval()).isEqualTo(Duration.ofMinutes(5));
    assertThat(s.orphanGrace()).isEqualTo(Duration.ofMinutes(10));
    assertThat(s.auditPageSize()).isEqualTo(500);
    assertThat(s.exitOnLostLeadership()).isTrue();
    assertThat(s.embedded().exitOnLostLeadership()).isFalse();
  }

  @Test
  void valuesAreReadFromTheEnvironment() {
    OperatorSettings s =
        OperatorSettings.fromEnvironment(
            Map.of(
                "KUBECONFIG", "/tmp/kc",
                "KIPAM_BLOCK_IDLE_SECONDS", "2",
                "POD_NAMESPACE", "kipam-system",
                "KIPAM_LEADER_ELECTION", "false",
                "KIPAM_AUDIT_QPS", "5",
                "KIPAM_AUDIT_BURST", "7"));

    assertThat(s.kubeconfig()).contains(Path.of("/tmp/kc"));
    assertThat(s.auditQps()).isEqualTo(5);
    assertThat(s.auditBurst()).isEqualTo(7);
    assertThat(s.blockIdleDelay()).isEqualTo(Duration.ofSeconds(2));
    assertThat(s.leaseNamespace()).isEqualTo(Optional.of("kipam-system"));
    assertThat(s.leaderElection()).isFalse();
  }

  @Test
  void everyProblemIsReportedAtOnceByName() {
    assertThatThrownBy(
            () ->
                OperatorSettings.fromEnvironment(
                    Map.of(
                        "KIPAM_API_QPS", "fast",
                        "KIPAM_BLOCK_IDLE_SECONDS", "-1",
                        "KIPAM_LEADER_ELECTION", "yes",
                        "KIPAM_AUDIT_SECONDS", "0",
                        "KIPAM_AUDIT_QPS", "0",
                        "KIPAM_LEASE_RENEW_DEADLINE_SECONDS", "20")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("KIPAM_API_QPS")
        .hasMessageContaining("KIPAM_BLOCK_IDLE_SECONDS")
        .hasMessageContaining("KIPAM_LEADER_ELECTION")
        .hasMessageContaining("KIPAM_AUDIT_SECONDS")
        .hasMessageContaining("KIPAM_AUDIT_QPS")
        .hasMessageContaining("KIPAM_LEASE_RENEW_DEADLINE_SECONDS");
  }
}
