package io.kipam.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.operator.ProcessRun;
import io.kipam.testing.WithControlPlane;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code kubectl kipam check} through kubectl and the launcher is {@code kipam-operator check}:
 * exit 0 and "no problems found" for a clean pool, exit 1 with the orphan (and its UID in the JSON)
 * once an address in one of three namespaces (chosen by a printed seed) names a Pod that is gone,
 * exit 2 and one line when the API server cannot be reached.
 */
@WithControlPlane(crds = true)
class KubectlKipamCheckIT extends AgainstControlPlane {

  @Test
  void isKipamOperatorCheck() throws Exception {
    String node = registeredWorker();
    IPPool pool = podsPool("10.67.0.0/24");
    String name = pool.getMetadata().getName();
    String block = objects.block(pool, "10.67.0.0/28", node, 4).getMetadata().getName();
    for (int i = 0; i < 3; i++) {
      String ns = namespaces.get(i);
      objects.address(ns, name, block, node, "10.67.0." + (1 + i), objects.pod(ns, "web"), true);
    }

    ProcessRun clean = plugin.kipam("check", "--pool", name);
    assertThat(clean.code()).as("stderr: %s", clean.err()).isZero();
    assertThat(clean.out()).endsWith("no problems found\n");

    String ns = namespaces.get(random.nextInt(3));
    IPAddress orphan =
        objects.address(
            ns,
            name,
            block,
            node,
            "10.67.0.9",
            new PodReference("web", UUID.randomUUID().toString()),
            false);
    ProcessRun text = plugin.kipam("check", "--pool", name);
    assertThat(text.code()).isEqualTo(1);
    assertThat(text.out())
        .contains(ns + "/" + orphan.getMetadata().getName() + "  10.67.0.9")
        .endsWith("1 problem found\n");
    ProcessRun json = plugin.kipam("check", "--pool", name, "-o", "json");
    assertThat(json.code()).isEqualTo(1);
    JsonNode problem = new ObjectMapper().readTree(json.out()).get("problems").get(0);
    assertThat(problem.get("uid").asText()).isEqualTo(orphan.getMetadata().getUid());

    int closed;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closed = socket.getLocalPort();
    }
    ProcessRun down = plugin.kipam(controlPlane.kubeconfigVia(closed), "check");
    assertThat(down.code()).isEqualTo(2);
    assertThat(down.err())
        .startsWith("kipam-operator check: cannot reach the API server")
        .hasLineCount(1);
  }
}
