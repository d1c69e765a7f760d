package io.kipam.system.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Assertions about one pool's addresses and blocks that several ITs make. */
public final class PoolAssertions {

  private PoolAssertions() {}

  /**
   * Asserts that {@code pool} holds {@code expected} addresses, none twice across namespaces, each
   * in a block of its own node; returns the pool's blocks as then read.
   */
  public static List<IPBlock> everyAddressOnceInABlockOfItsNode(
      KubernetesClient client, String pool, int expected) {
    List<IPAddress> held = Cluster.addresses(client, pool);
    Set<String> ips = new HashSet<>();
    held.forEach(a -> ips.add(a.getSpec().getIp()));
    assertThat(held).hasSize(expected);
    assertThat(ips).as("no address held twice, across namespaces").hasSize(expected);
    List<IPBlock> blocks = Cluster.blocks(client, pool);
    for (IPAddress address : held) {
      IpAddress ip = IpAddress.parse(address.getSpec().getIp());
      assertThat(blocks)
          .as("%s lies in a block of its node %s", ip, address.getSpec().getNode())
          .anyMatch(b -> Cluster.holds(b, ip, address.getSpec().getNode()));
    }
    return blocks;
  }

  /**
   * Asserts that, once every pod of {@code pool} is deleted, its sub-claims go back within {@code
   * within} and no address is left.
   */
  public static void subClaimsAndAddressesGone(
      KubernetesClient client, String pool, Duration within) {
    await()
        .atMost(within)
        .untilAsserted(
            () ->
                assertThat(Cluster.blocks(client, pool))
                    .as("the sub-claims go back with their addresses")
                    .noneMatch(b -> b.getSpec().getParent() != null));
    assertThat(Cluster.addresses(client, pool)).isEmpty();
  }
}
