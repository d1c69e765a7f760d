package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.operator.audit.AddressScan;
import io.kipam.operator.audit.ClusterFacts;
import io.kipam.operator.audit.Duplicates;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The audit's scan when etcd's history is compacted in the middle of a pass, as kube-apiserver does
 * every five minutes (here every second, on a control plane of the class's own): the continue token
 * of the pages read so far expires and the next page answers 410 Gone. The pass starts again and
 * still reads every IPAddress once and finds the address held twice (in the first and the last of
 * three namespaces). Where the compaction lands — which page, which pass, how often — is drawn from
 * a seed the test prints.
 */
class ExpiredContinueIT {

  private static final int PAGE = 4;
  private static final int PER_NAMESPACE = 12;
  private static final long SEED = Long.getLong("kipam.seed", System.nanoTime());

  private static KubernetesClient client;
  private static ControlPlane controlPlane;
  private static String duplicatedIp;
  private static Set<String> namespaces;
  private static int total;

  @BeforeAll
  static void addressesInThreeNamespaces() {
    controlPlane = ControlPlane.compactingEvery(Duration.ofSeconds(1));
    client = controlPlane.client();
    KipamCrds.install(client);
    System.out.println("ExpiredContinueIT seed " + SEED + " (-Dkipam.seed=" + SEED + ")");
    Kipam kipam = new Kipam(client);
    IPPool pool =
        kipam.createPool(Fixtures.uniqueName("scan"), "10.70.0.0/24", 28, Fixtures.uniqueName("n"));
    String poolName = pool.getMetadata().getName();
    List<String> names =
        List.of(
            Fixtures.namespace(client, "scan-a"),
            Fixtures.namespace(client, "scan-b"),
            Fixtures.namespace(client, "scan-c"));
    int host = 1;
    for (String namespace : names) {
      for (int i = 0; i < PER_NAMESPACE; i++, host++) {
        allocate(kipam, namespace, poolName, "10.70.0." + host);
      }
    }
    // The first namespace's first address, held again in the last namespace.
    duplicatedIp = "10.70.0.1";
    allocate(kipam, names.get(2), poolName, duplicatedIp);
    namespaces = Set.copyOf(names);
    total = names.size() * PER_NAMESPACE + 1;
  }

  private static void allocate(Kipam kipam, String namespace, String pool, String ip) {
    String pod = "pod-" + UUID.randomUUID().toString().substring(0, 8);
    kipam.allocateTo(
        namespace,
        pool,
        "block-of-" + pool,
        "node-a",
        ip,
        new PodReference(pod, UUID.randomUUID().toString()),
        false);
  }

  enum Where {
    FIRST_PASS,
    SECOND_PASS,
    BOTH_PASSES,
    FIRST_PASS_TWICE
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Where.class)
  void aPassWhoseContinueTokenExpiredStartsAgainAndMissesNothing(Where where) {
    Random random = new Random(SEED + where.ordinal());
    int pagesPerPass = (total + PAGE - 1) / PAGE;
    // Compactions after these page reads of the first and of the second pass (a restarted pass's
    // pages count on), never after a pass's last page: no token is left to expire there.
    int early = 1 + random.nextInt(pagesPerPass - 1);
    int later = early + 1 + random.nextInt(pagesPerPass - 1);
    List<Integer> inFirst =
        switch (where) {
          case FIRST_PASS, BOTH_PASSES -> List.of(early);
          case SECOND_PASS -> List.of();
          case FIRST_PASS_TWICE -> List.of(early, later);
        };
    List<Integer> inSecond =
        where == Where.SECOND_PASS || where == Where.BOTH_PASSES
            ? List.of(1 + random.nextInt(pagesPerPass - 1))
            : List.of();
    AtomicInteger pass = new AtomicInteger(1);
    int[] pagesRead = new int[3];
    AtomicInteger offered = new AtomicInteger();
    AddressScan scan =
        scanCompactingAfterPagesWhere(
            () -> {
              int p = pass.get();
              return (p == 1 ? inFirst : inSecond).contains(++pagesRead[p]);
            });

    int scanned =
        scan.firstPass(
            address -> {
              if (namespaces.contains(address.getMetadata().getNamespace())) {
                offered.incrementAndGet();
              }
              return false;
            });
    pass.set(2);
    Map<Duplicates.Slot, List<Duplicates.Holder>> duplicates = scan.duplicates();

    System.out.printf(
        "%s: compacted after page(s) %s of the first pass and %s of the second, %d pages a pass;"
            + " %d restart(s); the first pass counted %d IPAddresses; held twice: %s%n",
        where, inFirst, inSecond, pagesPerPass, scan.restarts(), scanned, duplicates.keySet());
    assertThat(scan.restarts())
        .as("every compaction expired the token")
        .isEqualTo(inFirst.size() + inSecond.size());
    assertThat(scanned).as("the last, whole pass counts each address once").isEqualTo(total);
    assertThat(duplicates).hasSize(1);
    Map.Entry<Duplicates.Slot, List<Duplicates.Holder>> found =
        duplicates.entrySet().iterator().next();
    assertThat(found.getKey().ip()).isEqualTo(duplicatedIp);
    assertThat(found.getValue())
        .as("both holders, each once, though the pass read some pages twice")
        .hasSize(2);
    assertThat(offered.get())
        .as("a restarted pass offers the addresses it had read again")
        .isGreaterThanOrEqualTo(total);
  }

  @Test
  void aTokenThatKeepsExpiringEndsTheScanWithTheApiServersAnswer() {
    AtomicInteger pagesRead = new AtomicInteger();
    AddressScan scan =
        scanCompactingAfterPagesWhere(
            () -> pagesRead.incrementAndGet() <= AddressScan.MAX_RESTARTS + 1);
    assertThatThrownBy(() -> scan.firstPass(address -> false))
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(410));
    assertThat(scan.restarts()).isEqualTo(AddressScan.MAX_RESTARTS);
  }

  /** A scan of pages of {@link #PAGE} that expires its token after each page where {@code now}. */
  private static AddressScan scanCompactingAfterPagesWhere(BooleanSupplier now) {
    return new AddressScan(
        client,
        ClusterFacts.forOneAudit(client),
        PAGE,
        items -> {
          if (now.getAsBoolean()) {
            compactAfterAWrite();
          }
        });
  }

  @AfterAll
  static void stopControlPlane() {
    if (controlPlane != null) {
      controlPlane.close();
    }
  }

  /**
   * A write moves etcd's revision past every token read so far; kube-apiserver's next compactions
   * expire them. Waits until a token taken now answers 410, as the scan's older one will.
   */
  private static void compactAfterAWrite() {
    String probe =
        client
            .resources(IPAddress.class)
            .inAnyNamespace()
            .list(new ListOptionsBuilder().withLimit(1L).build())
            .getMetadata()
            .getContinue();
    client
        .configMaps()
        .inNamespace("default")
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName(Fixtures.uniqueName("compaction"))
                .endMetadata()
                .build())
        .create();
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(200))
        .alias("a continue token taken before a write expires")
        .until(() -> expired(probe));
  }

  private static boolean expired(String token) {
    try {
      client
          .resources(IPAddress.class)
          .inAnyNamespace()
          .list(new ListOptionsBuilder().withLimit(1L).withContinue(token).build());
      return false;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 410) {
        return true;
      }
      throw e;
    }
  }
}
