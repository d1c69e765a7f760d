package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code kipam-operator check} run as its own process against the real control plane, so its exit
 * codes are real: a clean pool gives 0 and "no problems found"; an orphan (a Pod of the owner's
 * name with another UID), an address held in two namespaces and a block of a Node that does not
 * exist give 1, each named in the text and in the JSON, and nothing is removed; an API server that
 * cannot be reached gives 2 and one line on stderr. The control plane is shared with other tests,
 * so every run is restricted to this test's pool ({@code --pool}), of a network of its own.
 */
@WithControlPlane(crds = true)
class CheckCommandIT {

  private static String node;

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient client = controlPlane.client();
  private final Kipam kipam = new Kipam(client);

  @BeforeAll
  static void cluster(KubernetesClient client) {
    node = Fixtures.uniqueName("node");
    Fixtures.registerNode(client, node);
  }

  /**
   * kipam-operator's {@code main} in a JVM of its own, with this test JVM's classpath less the test
   * classes (whose logback-test.xml would log to stdout).
   */
  private static ProcessRun check(String... args) throws IOException, InterruptedException {
    String classpath =
        Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
            .filter(entry -> !entry.endsWith("test-classes"))
            .collect(Collectors.joining(File.pathSeparator));
    List<String> command = new ArrayList<>();
    command.add(System.getProperty("java.home") + "/bin/java");
    command.add("-cp");
    command.add(classpath);
    command.add(KipamOperator.class.getName());
    command.add("check");
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().remove("KUBECONFIG");
    ProcessRun run = ProcessRun.of(builder, "kipam-operator check");
    // The report in the test's output, for a reader of the failsafe reports.
    System.out.printf("kipam-operator check exited %d%n%s%s", run.code(), run.out(), run.err());
    return run;
  }

  @Test
  void aCleanPoolExitsZeroAndProblemsExitOneEachNamedInTextAndJson() throws Exception {
    Kipam.PoolWithBlock claimed =
        kipam.poolWithBlock("check", "10.62.0.0/24", "10.62.0.0/28", node);
    IPPool pool = claimed.pool();
    String network = claimed.network();
    String poolName = claimed.poolName();
    String blockName = claimed.blockName();
    String first = Fixtures.namespace(client, "check-a");
    String second = Fixtures.namespace(client, "check-b");
    kipam.allocateTo(first, poolName, blockName, node, "10.62.0.1", kipam.pod(first, "live"), true);

    ProcessRun clean =
        check("--kubeconfig", controlPlane.adminKubeconfig().toString(), "--pool", poolName);

    assertThat(clean.code()).as("exit code; stderr: %s", clean.err()).isZero();
    assertThat(clean.out()).contains(poolName).endsWith("no problems found\n");
    assertThat(clean.out())
        .as("the pool's row: capacity from the spec, one address allocated")
        .containsPattern(poolName + "\\s+" + network + "\\s+254\\s+1\\s+0\\s+0\\s+0");

    kipam.pod(second, "reused");
    IPAddress orphan =
        kipam.allocateTo(
            second,
            poolName,
            blockName,
            node,
            "10.62.0.2",
            new PodReference("reused", UUID.randomUUID().toString()),
            false);
    IPAddress one =
        kipam.allocateTo(
            first, poolName, blockName, node, "10.62.0.5", kipam.pod(first, "one"), true);
    IPAddress two =
        kipam.allocateTo(
            second, poolName, blockName, node, "10.62.0.5", kipam.pod(second, "two"), true);
    String goneNode = Fixtures.uniqueName("gone-node");
    IPBlock stuck = kipam.claimBlock(pool, "10.62.0.16/28", goneNode);

    ProcessRun text =
        check("--kubeconfig", controlPlane.adminKubeconfig().toString(), "--pool", poolName);

    assertThat(text.code()).as("exit code; stderr: %s", text.err()).isEqualTo(1);
    assertThat(text.out())
        .contains(second + "/" + orphan.getMetadata().getName() + "  10.62.0.2")
        .contains("its Pod " + second + "/reused")
        .contains("10.62.0.5 (network " + network + ") is held by")
        .contains(first + "/" + one.getMetadata().getName())
        .contains(second + "/" + two.getMetadata().getName())
        .contains(stuck.getMetadata().getName() + "  pool " + poolName)
        .contains("its Node " + goneNode + " does not exist")
        .endsWith("3 problems found\n");

    ProcessRun json =
        check(
            "--kubeconfig",
            controlPlane.adminKubeconfig().toString(),
            "--pool",
            poolName,
            "--output",
            "json");

    assertThat(json.code()).as("exit code; stderr: %s", json.err()).isEqualTo(1);
    JsonNode report = new ObjectMapper().readTree(json.out());
    assertThat(report.get("clean").asBoolean()).isFalse();
    assertThat(report.get("pools")).hasSize(1);
    JsonNode row = report.get("pools").get(0);
    assertThat(row.get("name").asText()).isEqualTo(poolName);
    assertThat(row.get("allocated").asLong()).isEqualTo(4);
    assertThat(row.get("orphans").asInt()).isEqualTo(1);
    assertThat(row.get("duplicates").asInt()).isEqualTo(1);
    assertThat(row.get("stuckBlocks").asInt()).isEqualTo(1);
    List<JsonNode> problems =
        StreamSupport.stream(report.get("problems").spliterator(), false).toList();
    assertThat(problems)
        .anySatisfy(
            p -> {
              assertThat(p.get("kind").asText()).isEqualTo("orphan");
              assertThat(p.get("address").asText())
                  .isEqualTo(second + "/" + orphan.getMetadata().getName());
              assertThat(p.get("ip").asText()).isEqualTo("10.62.0.2");
              assertThat(p.get("reason").asText()).isEqualTo("pod");
            })
        .anySatisfy(
            p -> {
              assertThat(p.get("kind").asText()).isEqualTo("duplicate");
              assertThat(p.get("ip").asText()).isEqualTo("10.62.0.5");
              assertThat(p.get("holders").toString())
                  .contains(first + "/" + one.getMetadata().getName())
                  .contains(second + "/" + two.getMetadata().getName());
            })
        .anySatisfy(
            p -> {
              assertThat(p.get("kind").asText()).isEqualTo("stuck-block");
              assertThat(p.get("block").asText()).isEqualTo(stuck.getMetadata().getName());
              assertThat(p.get("node").asText()).isEqualTo(goneNode);
            })
        .hasSize(3);

    assertThat(kipam.block(stuck.getMetadata().getName())).as("nothing is removed").isNotNull();
    for (IPAddress address : List.of(orphan, one, two)) {
      assertThat(
              client
                  .resources(IPAddress.class)
                  .inNamespace(address.getMetadata().getNamespace())
                  .withName(address.getMetadata().getName())
                  .get())
          .as("nothing is removed")
          .isNotNull();
    }
  }

  @Test
  void anApiServerThatCannotBeReachedExitsTwoWithOneLine() throws Exception {
    int closed;
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closed = socket.getLocalPort();
    }

    ProcessRun run = check("--kubeconfig", controlPlane.kubeconfigVia(closed).toString());

    assertThat(run.code()).as("exit code; stdout: %s", run.out()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.err())
        .startsWith("kipam-operator check: cannot reach the API server")
        .contains("127.0.0.1:" + closed)
        .hasLineCount(1);
  }
}
