package io.kipam.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.operator.ProcessRun;
import io.kipam.testing.WithControlPlane;
import java.util.Collections;
import org.junit.jupiter.api.Test;

/**
 * {@code kubectl kipam who-has} against the real control plane, with addresses of one pool in three
 * namespaces (which one holds what from a printed seed): it names the holder of an address, both
 * holders of an address held twice, exits 1 for an address nobody holds and 2 for one that is no
 * address.
 */
@WithControlPlane(crds = true)
class KubectlKipamWhoHasIT extends AgainstControlPlane {

  @Test
  void namesTheHolderOfAnAddressInAnyNamespace() {
    Collections.shuffle(namespaces, random);
    String node = registeredWorker();
    IPPool pool = podsPool("10.66.0.0/24");
    String name = pool.getMetadata().getName();
    String block = objects.block(pool, "10.66.0.0/28", node, 3).getMetadata().getName();
    for (String ns : namespaces) {
      objects.address(
          ns,
          name,
          block,
          node,
          "10.66.0." + (2 + namespaces.indexOf(ns)),
          objects.pod(ns, "other"),
          true);
    }
    String holderNs = namespaces.get(0);
    PodReference web = objects.pod(holderNs, "web");
    IPAddress held = objects.address(holderNs, name, block, node, "10.66.0.7", web, true);

    ProcessRun run = plugin.kipam("who-has", "10.66.0.7");

    assertThat(run.code()).as("stderr: %s", run.err()).isZero();
    assertThat(run.out())
        .startsWith("10.66.0.7 is held by 1 IPAddress\n")
        .contains(holderNs + "/" + held.getMetadata().getName() + "\n")
        .contains("  pool   " + name + "\n")
        .contains("  holder Pod web (uid " + web.getUid() + ")\n")
        .contains("  pod    " + holderNs + "/web (uid " + web.getUid() + "), exists")
        .contains("  node   " + node + "\n")
        .containsPattern("  since  \\d{4}-\\d\\d-\\d\\dT\\S+ \\(\\d+[smhd]\\S* ago\\)\n")
        .contains("  block  " + block + " (10.66.0.0/28, node " + node + ")\n");

    String other = namespaces.get(1 + random.nextInt(2));
    PodReference twin = objects.pod(other, "twin");
    IPAddress second = objects.address(other, name, block, node, "10.66.0.7", twin, true);
    ProcessRun twice = plugin.kipam("who-has", "10.66.0.7");
    assertThat(twice.code()).isZero();
    assertThat(twice.out())
        .startsWith("10.66.0.7 is held by 2 IPAddresses (more than one: see `kubectl kipam check`)")
        .contains(holderNs + "/" + held.getMetadata().getName())
        .contains(other + "/" + second.getMetadata().getName())
        .contains("  holder Pod twin (uid " + twin.getUid() + ")");

    ProcessRun free = plugin.kipam("who-has", "10.66.0.12");
    assertThat(free.code()).isEqualTo(1);
    assertThat(free.out()).isEqualTo("10.66.0.12 is held by no IPAddress\n");

    ProcessRun bad = plugin.kipam("who-has", "10.66.0.256");
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err())
        .startsWith("kubectl kipam who-has: '10.66.0.256' is not an IP address")
        .hasLineCount(1);
  }
}
