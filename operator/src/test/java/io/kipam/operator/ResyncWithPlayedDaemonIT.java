package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.testing.BesideTheSuite;
import io.kipam.testing.Fixtures;
import io.kipam.testing.ProductDefaults;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * kipam-operator looks at every pool at least once a resync interval ({@code KIPAM_RESYNC_SECONDS})
 * even when nothing about it changes. A pool's {@code DuplicateAddresses} condition follows what
 * the audit found, which no event of the pool, its blocks or its Nodes announces: one address held
 * in two namespaces shows on the pool within an audit pass and a resync interval. The family
 * "kipam-operator resync": 2 s, and the default.
 *
 * <p>The daemon is played ({@link Kipam}): the two holders are written as kipam-node writes an
 * address, one in each namespace, as only a broken or bypassed allocator would. At the default the
 * test waits minutes, so the class runs beside the rest of the suite on a control plane of its own
 * ({@link OwnControlPlane}).
 */
@BesideTheSuite
class ResyncWithPlayedDaemonIT {

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final AtomicInteger SUBNET = new AtomicInteger();
  @RegisterExtension static final OwnControlPlane CLUSTER = new OwnControlPlane();

  /** Every object reconciled at least every 2 s, and at the default. */
  static Stream<Named<Map<String, String>>> resync() {
    return ProductDefaults.timerFamily(
        "kipam-operator resync", "resync every 2 s", Map.of("KIPAM_RESYNC_SECONDS", "2"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("resync")
  void aDuplicateShowsOnItsPoolWithinAnAuditAndAResyncInterval(Map<String, String> resync)
      throws Exception {
    Map<String, String> settings = new HashMap<>(Map.of("KIPAM_AUDIT_SECONDS", "2"));
    settings.putAll(resync);
    OperatorSettings running = CLUSTER.startOperator(settings);
    Kipam kipam = CLUSTER.kipam;
    String node = CLUSTER.node;
    String base = "10.62." + SUBNET.incrementAndGet();
    IPPool pool =
        kipam.createPool(
            Fixtures.uniqueName("resync"), base + ".0/24", 28, Fixtures.uniqueName("net"));
    String poolName = pool.getMetadata().getName();
    String block = kipam.claimBlock(pool, base + ".0/28", node).getMetadata().getName();
    String ip = base + ".5";
    String first = Fixtures.namespace(CLUSTER.client, "resync-a");
    String second = Fixtures.namespace(CLUSTER.client, "resync-b");
    kipam.allocateTo(first, poolName, block, node, ip, kipam.pod(first, "one"), true);
    kipam.allocateTo(second, poolName, block, node, ip, kipam.pod(second, "two"), true);
    long written = System.nanoTime();

    await()
        .atMost(running.auditInterval().plus(running.resyncInterval()).plus(WITHIN))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              Condition duplicate = kipam.requiredCondition(poolName, "DuplicateAddresses");
              assertThat(duplicate.getStatus()).isEqualTo("True");
              assertThat(duplicate.getMessage()).contains(ip);
            });
    System.out.printf(
        "DuplicateAddresses on pool %s %.1f s after the second holder was written (resync %s)%n",
        poolName, (System.nanoTime() - written) / 1e9, running.resyncInterval());
  }
}
