package io.kipam.system.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.system.harness.Cluster;
import io.kipam.system.harness.KipamProcesses;
import io.kipam.system.harness.OperatorProcess;
import io.kipam.system.harness.ProcessCpu;
import io.kipam.system.harness.SimulatedNodes;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * kipam-operator's memory and audit with many IPAddresses (design §6: its memory must not grow with
 * the pods). A real kipam-operator process and simulated nodes ({@link SimulatedNodes}) holding
 * 10,000, 50,000 and 150,000 IPAddresses over four namespaces, with addresses planted a second time
 * in the last namespace at each size. For each size it prints the time of a whole audit pass that
 * began after the size was reached, whether it reported every planted duplicate, kipam-operator's
 * heap after a full GC ({@code jcmd GC.run}, then {@code GC.heap_info}) and kube-apiserver's and
 * etcd's memory.
 *
 * <p>Run with {@code ./mvnw -B -pl system-tests -am verify -Pbenchmark -DskipIT -DskipE2E
 * -Dit.test=AuditScaleBenchmark}; {@code -Dkipam.audit.sizes=10000,50000,150000} changes the sizes
 * (as many as the machine holds: say which in the results), {@code -Dkipam.seed=} repeats the
 * simulated nodes' choices. docs/benchmarks.md has results. Printed, never asserted.
 */
public class AuditScaleBenchmark {

  private static final int ADDRESSES_PER_NODE = 60;
  private static final int PLANTED_PER_SIZE = 3;

  @Test
  public void measure() throws Exception {
    int[] sizes = Sizes.of("kipam.audit.sizes", "10000,50000,150000");
    long seed = Long.getLong("kipam.seed", ThreadLocalRandom.current().nextLong());
    System.out.printf(
        "audit at scale: sizes %s, seed %d (-Dkipam.seed= repeats it)%n",
        Arrays.toString(sizes), seed);
    int largest = Arrays.stream(sizes).max().orElseThrow();
    try (KipamProcesses processes = KipamProcesses.onFreshControlPlane("audit-bench")) {
      KubernetesClient client = processes.client();
      ControlPlane controlPlane = processes.controlPlane();
      OperatorProcess operator =
          processes
              .operator()
              .withMetricsPort()
              .startLeading(Map.of("KIPAM_AUDIT_SECONDS", "10"), Duration.ofSeconds(60));
      String pool = Fixtures.uniqueName("audit");
      Cluster.poolOnItsNetworkReadiedByOperator(client, pool, Cluster.spec("10.64.0.0/13", 26, 0));
      List<String> namespaces = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        namespaces.add(Fixtures.namespace(client, "audit-bench"));
      }
      String last = Fixtures.namespace(client, "audit-bench-last");
      List<String> rows = new ArrayList<>();
      int planted = 0;
      try (SimulatedNodes sims = new SimulatedNodes(client, pool, namespaces, seed)) {
        long grow = System.nanoTime();
        sims.growTo(largest / ADDRESSES_PER_NODE + 1, 16);
        System.out.printf(
            "  %d simulated nodes, each holding a slot, in %.0f s%n",
            sims.size(), (System.nanoTime() - grow) / 1e9);
        for (int size : sizes) {
          long fill = System.nanoTime();
          sims.fillTo(size, 16);
          for (int k = 0; k < PLANTED_PER_SIZE; k++) {
            sims.plantDuplicate(last);
            planted++;
          }
          System.out.printf(
              "  %d IPAddresses written (and %d planted twice) in %.0f s%n",
              sims.live(), planted, (System.nanoTime() - fill) / 1e9);
          double[] pass = wholePass(operator);
          double duplicates = operator.metric("kipam_audit_duplicates");
          double heap = heapAfterGcMiB(operator.pid());
          String row =
              String.format(
                  "  %6d IPAddresses: one audit pass %.1f s; %.0f addresses held twice reported"
                      + " (%d planted); kipam-operator heap after full GC %.1f MiB;"
                      + " kube-apiserver %.0f MiB, etcd %.0f MiB RSS",
                  sims.live(),
                  pass[0],
                  duplicates,
                  planted,
                  heap,
                  rssMiB(controlPlane, "kube-apiserver"),
                  rssMiB(controlPlane, "etcd"));
          System.out.println(row);
          rows.add(row);
        }
      }
      Path dir = Path.of(System.getProperty("kipam.reportDir", "target/benchmark-report"));
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("audit-scale.txt"), String.join("\n", rows) + "\n");
      assertThat(rows).hasSize(sizes.length);
    }
  }

  /**
   * Waits for an audit that starts after now and ends, and returns its duration (s): the audit in
   * progress, if any, ends first, then the next one is timed.
   */
  private static double[] wholePass(OperatorProcess operator) throws Exception {
    double count = operator.metric("kipam_audit_duration_seconds_count");
    while (operator.metric("kipam_audit_duration_seconds_count") < count + 1) {
      Thread.sleep(500);
    }
    double sum = operator.metric("kipam_audit_duration_seconds_sum");
    while (operator.metric("kipam_audit_duration_seconds_count") < count + 2) {
      Thread.sleep(500);
    }
    return new double[] {operator.metric("kipam_audit_duration_seconds_sum") - sum};
  }

  /** The used heap of JVM {@code pid} after a full GC, from jcmd (Metaspace left out). */
  static double heapAfterGcMiB(long pid) throws Exception {
    String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
    run(jcmd, Long.toString(pid), "GC.run");
    String info = run(jcmd, Long.toString(pid), "GC.heap_info");
    double usedKiB = 0;
    for (String line : info.split("\n")) {
      if (line.contains("Metaspace") || line.contains("class space")) {
        continue;
      }
      Matcher m = Pattern.compile("used (\\d+)K").matcher(line);
      if (m.find()) {
        usedKiB += Long.parseLong(m.group(1));
      }
    }
    return usedKiB / 1024;
  }

  private static String run(String... command) throws Exception {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(process.getInputStream().readAllBytes());
    process.waitFor();
    return out;
  }

  static double rssMiB(ControlPlane controlPlane, String name) {
    Long pid = controlPlane.pids().get(name);
    return pid == null ? Double.NaN : ProcessCpu.rssMiB(pid);
  }
}
