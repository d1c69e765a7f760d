package io.kipam.operator.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The webhook's certificate: made for its hosts, made anew for others or before it runs out. */
class ServingCertificateTest {

  private static final Instant NOW = Instant.parse("2026-11-28T10:00:00Z");

  @Test
  void aCertificateServesItsHostsUntilAMonthBeforeItRunsOut() throws Exception {
    List<String> hosts = List.of("kipam-webhook.kipam-system.svc", "127.0.0.1");
    ServingCertificate made = ServingCertificate.generate(hosts, NOW);
    ServingCertificate read = new ServingCertificate(made.certificatePem(), made.keyPem());

    assertThat(read.serves(hosts, NOW)).isTrue();
    assertThat(read.serves(List.of("kipam-webhook.kipam-system.svc"), NOW)).isTrue();
    assertThat(read.serves(List.of("kipam-webhook.ipam.svc"), NOW))
        .as("another namespace's Service")
        .isFalse();
    assertThat(read.serves(hosts, NOW.plus(ServingCertificate.VALIDITY).minus(Duration.ofDays(29))))
        .as("less than 30 days left")
        .isFalse();
    assertThat(read.certificate().getBasicConstraints()).as("its own CA").isNotNegative();
    assertThat(read.sslContext().getProtocol()).isEqualTo("TLS");
  }

  @Test
  void whatIsNotACertificateAndKeyServesNothing() {
    ServingCertificate made = ServingCertificate.generate(List.of("a.b.svc"), NOW);

    assertThat(new ServingCertificate("not PEM", made.keyPem()).serves(List.of("a.b.svc"), NOW))
        .isFalse();
    assertThat(
            new ServingCertificate(made.certificatePem(), "not PEM")
                .serves(List.of("a.b.svc"), NOW))
        .isFalse();
  }
}
