package io.kipam.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.system.harness.Close;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.CniCall;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.NodeRig;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.PlayedOperator;
import io.kipam.system.harness.TimerFamilies;
import io.kipam.testing.BesideTheSuite;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A node that answered Ready to a release round nobody comes back to (its kipam-operator gone for
 * good) takes its answer back after {@code KIPAM_RELEASE_ABANDON_SECONDS} and opens the block
 * again: the family "kipam-node release abandon", 6 s and the default (five minutes). A real
 * kipam-node, kipam-operator as its own process until it is SIGKILLed, the round written as an
 * operator writes it ({@link PlayedOperator}).
 *
 * <p>Each variant runs on a control plane of its own, so the class runs beside the rest of the
 * suite ({@link BesideTheSuite}): at the defaults most of its time is waiting.
 */
@BesideTheSuite
class ReleaseAbandonIT {

  private static final Duration WITHIN = Duration.ofSeconds(60);
  private static final Map<String, String> DAEMON = Map.of("KIPAM_BLOCK_STATUS_SECONDS", "1");

  private KipamProcesses processes;
  private KubernetesClient client;

  @AfterEach
  void stopProcesses() throws Exception {
    Close.all(processes);
  }

  private IPBlock block(String name) {
    return client.resources(IPBlock.class).withName(name).get();
  }

  private static boolean inBlock(IPBlock block, String ip) {
    return Cidr.parse(block.getSpec().getCidr()).contains(IpAddress.parse(ip));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("io.kipam.system.harness.TimerFamilies#releaseAbandon")
  void aRoundWhoseOperatorNeverComesBackIsTakenBackByTheDaemon(Map<String, String> abandon)
      throws Exception {
    processes = KipamProcesses.onFreshControlPlane("abandon");
    client = processes.client();
    PlayedOperator played = new PlayedOperator(client);
    // The operator makes the pool Ready, then is gone for good (SIGKILL, never restarted).
    OperatorProcess operator =
        processes.leadingOperator(Map.of("KIPAM_BLOCK_IDLE_SECONDS", "3600"), WITHIN);
    // One block: while it is closed, this node has nothing to allocate from.
    String pool = Cluster.readiedPool(client, "abandon", Cluster.spec("10.247.0.0/28", 28, 0));
    NodeRig a = processes.node(pool, TimerFamilies.over(DAEMON, abandon));
    Duration after = a.daemon.settings().releaseAbandonAfter();
    String ip = a.add(pool, 0).ip();
    String name = a.blockOf(pool, ip).orElseThrow().getMetadata().getName();
    assertThat(a.del(pool, 0).ok()).isTrue();
    operator.kill();

    // A round only an operator writes, written here: the one nobody comes back to.
    played.request(name);
    await().atMost(WITHIN).until(() -> played.state(name) == ReleaseState.Ready);
    long ready = System.nanoTime();
    CniCall.Outcome closed = a.add(pool, 1);
    assertThat(closed.ok()).as("closed while Ready: %s", closed.stdout()).isFalse();

    await()
        .atMost(after.plus(WITHIN))
        .pollInterval(Duration.ofMillis(500))
        .alias("the daemon takes its answer back (log " + a.daemon.log + ")")
        .until(() -> played.state(name) == ReleaseState.Refused);
    Duration closedFor = Duration.ofNanos(System.nanoTime() - ready);
    System.out.printf(
        "the block stayed closed %.1f s after its Ready answer was seen (abandon after %s)%n",
        closedFor.toMillis() / 1e3, after);
    // The answer is seen a moment after the daemon wrote it, when its wait began.
    assertThat(closedFor).as("taken back early").isGreaterThan(after.minusSeconds(2));
    assertThat(block(name).getStatus().getRelease().getReason())
        .contains("did not act on the Ready answer");
    assertThat(inBlock(block(name), a.add(pool, 2).ip())).as("open again").isTrue();
  }
}
