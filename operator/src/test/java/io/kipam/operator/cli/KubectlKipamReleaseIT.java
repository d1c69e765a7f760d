package io.kipam.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.operator.ProcessRun;
import io.kipam.testing.Fixtures;
import io.kipam.testing.WithControlPlane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kubectl kipam release --from-report} against the real control plane, with Pods and their
 * addresses being created meanwhile in the same three namespaces: it removes exactly the orphans
 * the report named that are still orphaned, and keeps an orphan that was re-owned by a live Pod,
 * one allocated again under the same name, and one whose Node came back. Which namespace holds
 * which case, and the order they are written in, come from a printed seed.
 */
@WithControlPlane(crds = true)
class KubectlKipamReleaseIT extends AgainstControlPlane {

  @TempDir Path dir;

  @Test
  void removesOnlyTheOrphansStillOrphanedAndKeepsWhatCameBack() throws Exception {
    String node = Fixtures.uniqueName("node");
    Fixtures.registerNode(client, node);
    String comesBack = Fixtures.uniqueName("returning-node");
    String staysGone = Fixtures.uniqueName("gone-node");
    Collections.shuffle(namespaces, random);
    IPPool pool =
        objects.pool(
            Fixtures.uniqueName("release"), "10.64.0.0/24", 28, Fixtures.uniqueName("net"));
    String poolName = pool.getMetadata().getName();
    String block = objects.block(pool, "10.64.0.0/28", node, 8).getMetadata().getName();
    String returningBlock =
        objects.block(pool, "10.64.0.16/28", comesBack, 1).getMetadata().getName();
    String goneBlock = objects.block(pool, "10.64.0.32/28", staysGone, 1).getMetadata().getName();

    // Each case in a namespace of the seed's choosing, written in the seed's order.
    List<Runnable> writes = new ArrayList<>();
    IPAddress[] a = new IPAddress[6];
    for (int i = 0; i < 4; i++) {
      int n = i;
      writes.add(
          () ->
              a[n] =
                  orphanOfPod(
                      pick(namespaces, random), poolName, block, node, "10.64.0." + (2 + n)));
    }
    writes.add(
        () ->
            a[4] =
                ofLivePod(
                    pick(namespaces, random), poolName, returningBlock, comesBack, "10.64.0.17"));
    writes.add(
        () ->
            a[5] =
                ofLivePod(pick(namespaces, random), poolName, goneBlock, staysGone, "10.64.0.33"));
    Collections.shuffle(writes, random);
    writes.forEach(Runnable::run);
    IPAddress stillOrphan = a[0];
    IPAddress reOwned = a[1];
    IPAddress reAllocated = a[2];
    IPAddress secondOrphan = a[3];
    IPAddress nodeComesBack = a[4];
    IPAddress nodeStaysGone = a[5];
    String live = namespaces.get(random.nextInt(3));
    IPAddress liveAddress =
        objects.address(live, poolName, block, node, "10.64.0.9", objects.pod(live, "live"), true);

    ProcessRun check = plugin.kipam("check", "--pool", poolName, "-o", "json");
    assertThat(check.code()).as("check; stderr: %s", check.err()).isEqualTo(1);
    Path report = dir.resolve("report.json");
    Files.writeString(report, check.out());
    List<JsonNode> orphans = new ArrayList<>();
    new ObjectMapper()
        .readTree(check.out())
        .get("problems")
        .forEach(
            p -> {
              if (p.get("kind").asText().equals("orphan")) {
                orphans.add(p);
              }
            });
    assertThat(orphans).as("the six orphans, with their UIDs").hasSize(6);
    orphans.forEach(p -> assertThat(p.get("uid").asText()).isNotEmpty());

    // Between report and release: one orphan re-owned by a Pod that exists, one released and
    // allocated again to a live Pod, one Node back.
    PodReference adopter =
        objects.pod(reOwned.getMetadata().getNamespace(), Fixtures.uniqueName("adopter"));
    client
        .resources(IPAddress.class)
        .inNamespace(reOwned.getMetadata().getNamespace())
        .withName(reOwned.getMetadata().getName())
        .edit(
            x -> {
              x.getMetadata().setOwnerReferences(List.of(ClusterObjects.owner(adopter)));
              return x;
            });
    objects.release(reAllocated);
    String ns = reAllocated.getMetadata().getNamespace();
    IPAddress again =
        objects.address(
            ns,
            poolName,
            block,
            node,
            "10.64.0.4",
            objects.pod(ns, Fixtures.uniqueName("new")),
            true);
    Fixtures.registerNode(client, comesBack);

    // Pods and their addresses keep coming while release runs.
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger made = new AtomicInteger();
    List<IPAddress> meanwhile = Collections.synchronizedList(new ArrayList<>());
    Thread churn =
        new Thread(
            () -> {
              Random r = new Random(seed + 1);
              for (int i = 10; !stop.get() && i < 15; i++) {
                String where = namespaces.get(r.nextInt(3));
                meanwhile.add(
                    objects.address(
                        where,
                        poolName,
                        block,
                        node,
                        "10.64.0." + i,
                        objects.pod(where, Fixtures.uniqueName("churn")),
                        true));
                made.incrementAndGet();
              }
            });
    churn.start();
    ProcessRun release = plugin.kipam("release", "--from-report", report.toString());
    stop.set(true);
    churn.join();

    assertThat(release.code()).as("exit code; stderr: %s", release.err()).isZero();
    assertThat(release.out())
        .contains("6 orphans named in " + report)
        .contains("(2 other problems of the report are left alone)")
        .contains("removed " + name(stillOrphan))
        .contains("removed " + name(secondOrphan))
        .contains(
            "removed "
                + name(nodeStaysGone)
                + " (10.64.0.33 of pool "
                + poolName
                + "): its Node "
                + staysGone
                + " does not exist")
        .contains(
            "kept    "
                + name(reOwned)
                + " (10.64.0.3 of pool "
                + poolName
                + "): its pod is there (again): "
                + reOwned.getMetadata().getNamespace()
                + "/"
                + adopter.getName()
                + " (uid "
                + adopter.getUid()
                + ") exists")
        .contains(
            "kept    "
                + name(reAllocated)
                + " (10.64.0.4 of pool "
                + poolName
                + "): allocated again since the report (uid "
                + again.getMetadata().getUid())
        .contains(
            "kept    "
                + name(nodeComesBack)
                + " (10.64.0.17 of pool "
                + poolName
                + "): its Node "
                + comesBack
                + " exists (again)")
        .endsWith("3 removed, 3 kept (no orphans any more), 0 still orphaned but not removed\n");

    for (IPAddress removed : List.of(stillOrphan, secondOrphan)) {
      IPAddress now = objects.current(removed);
      assertThat(now.getMetadata().getDeletionTimestamp())
          .as("%s is deleted; its node's daemon ends the attachment", name(removed))
          .isNotNull();
    }
    assertThat(objects.current(nodeStaysGone))
        .as("its Node is gone: deleted and its attachment ended")
        .isNull();
    for (IPAddress kept : List.of(reOwned, again, nodeComesBack, liveAddress)) {
      IPAddress now = objects.current(kept);
      assertThat(now).as(name(kept)).isNotNull();
      assertThat(now.getMetadata().getDeletionTimestamp()).as(name(kept)).isNull();
    }
    assertThat(meanwhile).hasSize(made.get());
    for (IPAddress m : meanwhile) {
      assertThat(objects.current(m).getMetadata().getDeletionTimestamp())
          .as("%s, made while release ran", name(m))
          .isNull();
    }

    ProcessRun twice = plugin.kipam("release", "--from-report", report.toString());
    assertThat(twice.code()).as("a second run: nothing left; stderr %s", twice.err()).isZero();
    assertThat(twice.out())
        .endsWith("0 removed, 6 kept (no orphans any more), 0 still orphaned but not removed\n");

    String old = check.out().replaceAll("\"uid\" : \"[^\"]*\",", "");
    Path oldReport = dir.resolve("old.json");
    Files.writeString(oldReport, old);
    ProcessRun noUid = plugin.kipam("release", "--from-report", oldReport.toString());
    assertThat(noUid.code()).as("orphans named without a UID are left: exit 1").isEqualTo(1);
    assertThat(noUid.out())
        .contains("the report names no uid")
        .endsWith("0 removed, 0 kept (no orphans any more), 6 still orphaned but not removed\n");

    ProcessRun notAReport =
        plugin.kipam("release", "--from-report", dir.resolve("none.json").toString());
    assertThat(notAReport.code()).isEqualTo(2);
    assertThat(notAReport.err())
        .isEqualTo(
            "kubectl kipam release: cannot read the report "
                + dir.resolve("none.json")
                + ": no such file\n");
  }

  /** An address naming a Pod of the same name with another UID: an orphan of reason pod. */
  private IPAddress orphanOfPod(String ns, String pool, String block, String node, String ip) {
    String pod = Fixtures.uniqueName("web");
    objects.pod(ns, pod);
    return objects.address(
        ns, pool, block, node, ip, new PodReference(pod, UUID.randomUUID().toString()), false);
  }

  /** An address of a new Pod that lives on {@code node}, owned by it. */
  private IPAddress ofLivePod(String ns, String pool, String block, String node, String ip) {
    return objects.address(
        ns, pool, block, node, ip, objects.podOn(ns, Fixtures.uniqueName("web"), node), true);
  }

  private static String pick(List<String> namespaces, Random random) {
    return namespaces.get(random.nextInt(namespaces.size()));
  }

  private static String name(IPAddress address) {
    return address.getMetadata().getNamespace() + "/" + address.getMetadata().getName();
  }
}
