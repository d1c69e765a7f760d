package io.kipam.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.ProcessRun;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import org.junit.jupiter.api.Test;

/**
 * {@code kubectl kipam pools} against the real control plane: a pool with blocks on two nodes and
 * addresses in three namespaces (how many on which node, in which namespace, from a printed seed)
 * is shown with its size, allocated and available counts, a bar, and a row per node; {@code -o
 * json} says the same; a pool that does not exist exits 2.
 */
@WithControlPlane(crds = true)
class KubectlKipamPoolsIT extends AgainstControlPlane {

  @Test
  void showsEachPoolAndWhatEachNodeHoldsOfIt() throws Exception {
    String first = Fixtures.uniqueName("worker");
    String second = Fixtures.uniqueName("worker");
    IPPool pool = podsPool("10.65.0.0/24");
    String name = pool.getMetadata().getName();
    int onFirst = 3 + random.nextInt(10);
    int onSecond = 1 + random.nextInt(5);
    String firstBlock = objects.block(pool, "10.65.0.0/28", first, onFirst).getMetadata().getName();
    objects.block(pool, "10.65.0.16/28", first, 0);
    String secondBlock =
        objects.block(pool, "10.65.0.64/28", second, onSecond).getMetadata().getName();
    for (int i = 0; i < onFirst; i++) {
      String ns = namespaces.get(random.nextInt(3));
      objects.address(
          ns, name, firstBlock, first, "10.65.0." + (1 + i), objects.pod(ns, "p1-" + i), true);
    }
    for (int i = 0; i < onSecond; i++) {
      String ns = namespaces.get(random.nextInt(3));
      objects.address(
          ns, name, secondBlock, second, "10.65.0." + (65 + i), objects.pod(ns, "p2-" + i), true);
    }

    ProcessRun text = plugin.kipam("pools", "--pool", name);

    // Sizes are assignable addresses: the pool's network address 10.65.0.0 is never handed out,
    // so the first node's blocks hold 15 + 16.

    assertThat(text.code()).as("stderr: %s", text.err()).isZero();
    int allocated = onFirst + onSecond;
    assertThat(text.out())
        .containsPattern(
            name
                + "\\s+10\\.65\\.0\\.0/24\\s+254\\s+"
                + allocated
                + "\\s+"
                + (254 - allocated)
                + "\\s+3\\s+\\[#+\\.+\\]\\s+\\d+%")
        .containsPattern(
            "  " + first + "\\s+2\\s+0\\s+31\\s+" + onFirst + "\\s+" + onFirst + "\\s+\\[#+\\.*\\]")
        .containsPattern(
            "  "
                + second
                + "\\s+1\\s+0\\s+16\\s+"
                + onSecond
                + "\\s+"
                + onSecond
                + "\\s+\\[#+\\.*\\]")
        .contains("(no current status from kipam-operator: counts computed from the blocks)");

    ProcessRun json = plugin.kipam("pools", "--pool", name, "-o", "json");
    assertThat(json.code()).isZero();
    JsonNode p = new ObjectMapper().readTree(json.out()).get("pools").get(0);
    assertThat(p.get("name").asText()).isEqualTo(name);
    assertThat(p.get("size").asText()).isEqualTo("254");
    assertThat(p.get("allocated").asLong()).isEqualTo(allocated);
    assertThat(p.get("available").asText()).isEqualTo(Integer.toString(254 - allocated));
    assertThat(p.get("nodes")).hasSize(2);
    JsonNode node = p.get("nodes").get(first.compareTo(second) < 0 ? 0 : 1);
    assertThat(node.get("node").asText()).isEqualTo(first);
    assertThat(node.get("blocks").asInt()).isEqualTo(2);
    assertThat(node.get("addresses").asLong()).isEqualTo(onFirst);

    ProcessRun missing = plugin.kipam("pools", "--pool", "no-such-pool");
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err())
        .isEqualTo("kubectl kipam pools: IPPool no-such-pool does not exist\n");
  }
}
