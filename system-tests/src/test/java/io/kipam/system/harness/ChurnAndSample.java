package io.kipam.system.harness;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What happens around a test's own pods: ordinary pods of the pool, ADD then DEL, on every rig in
 * its namespaces, and a sample of every IPAddress of the pool every 200 ms, recording any address
 * held by two objects at once.
 */
public final class ChurnAndSample implements AutoCloseable {

  private final KubernetesClient client;
  private final String pool;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicInteger churned = new AtomicInteger();
  private final List<String> duplicates = new CopyOnWriteArrayList<>();
  private final ExecutorService threads;

  private ChurnAndSample(KubernetesClient client, String pool, List<NodeRig> rigs) {
    this.client = client;
    this.pool = pool;
    this.threads = Executors.newFixedThreadPool(rigs.size() + 1);
    for (NodeRig rig : rigs) {
      threads.submit(() -> churn(rig));
    }
    threads.submit(this::sample);
  }

  /** Starts churning on {@code rigs} and sampling {@code pool}. */
  public static ChurnAndSample start(KubernetesClient client, String pool, List<NodeRig> rigs) {
    return new ChurnAndSample(client, pool, rigs);
  }

  /** The ordinary ADD/DEL pairs done so far. */
  public int churned() {
    return churned.get();
  }

  /** Every address seen held by two IPAddresses at once, with its holders. */
  public List<String> duplicates() {
    return List.copyOf(duplicates);
  }

  private void churn(NodeRig rig) {
    int i = 1000;
    while (!stop.get()) {
      try {
        CniCall.Outcome added = rig.add(pool, i);
        if (added.ok()) {
          rig.del(pool, i);
          churned.incrementAndGet();
        }
        rig.deletePod(i);
      } catch (RuntimeException e) {
        // A daemon being restarted: the next pod tries again.
      }
      i++;
    }
  }

  private void sample() {
    while (!stop.get()) {
      try {
        Map<String, List<String>> byIp = new HashMap<>();
        for (IPAddress a :
            client
                .resources(IPAddress.class)
                .inAnyNamespace()
                .withLabel(ApiConstants.LABEL_POOL, pool)
                .list()
                .getItems()) {
          byIp.computeIfAbsent(a.getSpec().getIp(), x -> new ArrayList<>())
              .add(a.getMetadata().getNamespace() + "/" + a.getSpec().getPod().getName());
        }
        byIp.forEach(
            (ip, holders) -> {
              if (holders.size() > 1) {
                duplicates.add(ip + " " + holders);
              }
            });
        Thread.sleep(200);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        // The API server is busy: the next sample looks again.
      }
    }
  }

  /**
   * Stops, prints what happened meanwhile under {@code test}'s name and asserts that no address was
   * held twice, here or in {@code others} (stopped too).
   */
  public void closeAndCheck(String test, ChurnAndSample... others) throws InterruptedException {
    close();
    List<String> all = new ArrayList<>(duplicates);
    for (ChurnAndSample other : others) {
      other.close();
      all.addAll(other.duplicates());
    }
    System.out.println(
        test
            + ": "
            + churned.get()
            + " ordinary ADD/DEL pairs churned meanwhile; addresses held twice: "
            + all);
    org.assertj.core.api.Assertions.assertThat(all)
        .as("addresses held by two IPAddresses at once")
        .isEmpty();
  }

  /**
   * A test's end: {@link #closeAndCheck} of {@code meanwhile} (when it was started), then every rig
   * closed whatever the check found.
   */
  public static void stop(
      String test, List<NodeRig> rigs, ChurnAndSample meanwhile, ChurnAndSample... others)
      throws InterruptedException {
    try {
      if (meanwhile != null) {
        meanwhile.closeAndCheck(test, others);
      }
    } finally {
      for (NodeRig rig : rigs) {
        rig.close();
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop.set(true);
    threads.shutdown();
    threads.awaitTermination(90, TimeUnit.SECONDS);
  }
}
