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
 * its namespaces, and a sample of every IPAddress of the cluster every 200 ms (every pool, every
 * namespace), recording any address held by two objects at once in one network (the same address in
 * two networks is two addresses). A sample the API server does not answer is an error the check
 * fails on: a checker that skips what it cannot read would report "none held twice" for samples it
 * never took. The check says how many samples it took.
 */
public final class ChurnAndSample implements AutoCloseable {

  /**
   * The pools of every checker running now: a test that starts one per pool has each sample all of
   * its pools at once, so an address held twice across two of them in one network is seen. Not the
   * whole cluster: earlier tests leave addresses in pools whose CIDRs overlap a later test's (a
   * test that readies its pools itself is not refused an overlap, as kipam-operator would).
   */
  private static final java.util.Set<String> SAMPLED =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final KubernetesClient client;

  /**
   * The sampler's own client, which tries no request again: the test's client retries a failed
   * request for up to a minute and more, and so would turn an unanswered sample into a late one.
   */
  private final KubernetesClient sampler;

  private final String pool;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicInteger churned = new AtomicInteger();
  private final CopyOnWriteArrayList<String> duplicates = new CopyOnWriteArrayList<>();
  private final List<String> errors = new CopyOnWriteArrayList<>();
  private final AtomicInteger samples = new AtomicInteger();
  private final ExecutorService threads;

  private ChurnAndSample(KubernetesClient client, String pool, List<NodeRig> rigs) {
    this.client = client;
    this.sampler =
        new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(
                new io.fabric8.kubernetes.client.ConfigBuilder(client.getConfiguration())
                    .withRequestRetryBackoffLimit(0)
                    .build())
            .build();
    this.pool = pool;
    SAMPLED.add(pool);
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
        heldTwice(
                sampler
                    .resources(IPAddress.class)
                    .inAnyNamespace()
                    .withLabelIn(ApiConstants.LABEL_POOL, SAMPLED.toArray(String[]::new))
                    .list()
                    .getItems())
            .forEach(duplicates::addIfAbsent);
        samples.incrementAndGet();
      } catch (RuntimeException e) {
        errors.add(e.toString());
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /**
   * Each address of {@code addresses} held by more than one of them in one network, with its
   * holders.
   */
  static List<String> heldTwice(List<IPAddress> addresses) {
    Map<String, List<String>> byAddress = new HashMap<>();
    for (IPAddress a : addresses) {
      byAddress
          .computeIfAbsent(
              a.getSpec().getNetwork() + " " + a.getSpec().getIp(), x -> new ArrayList<>())
          .add(
              a.getMetadata().getNamespace()
                  + "/"
                  + (a.getSpec().getPod() == null
                      ? a.getMetadata().getName()
                      : a.getSpec().getPod().getName())
                  + " (pool "
                  + a.getSpec().getPool()
                  + ")");
    }
    List<String> twice = new ArrayList<>();
    byAddress.forEach(
        (address, holders) -> {
          if (holders.size() > 1) {
            java.util.Collections.sort(holders);
            twice.add(address + " " + holders);
          }
        });
    return twice;
  }

  /** The samples taken so far. */
  public int samples() {
    return samples.get();
  }

  /**
   * Stops, prints what happened meanwhile under {@code test}'s name and asserts that no address was
   * held twice, here or in {@code others} (stopped too).
   */
  public void closeAndCheck(String test, ChurnAndSample... others) throws InterruptedException {
    close();
    List<String> all = new ArrayList<>(duplicates);
    List<String> failed = new ArrayList<>(errors);
    int taken = samples.get();
    for (ChurnAndSample other : others) {
      other.close();
      all.addAll(other.duplicates());
      failed.addAll(other.errors);
      taken += other.samples();
    }
    System.out.println(
        test
            + ": "
            + churned.get()
            + " ordinary ADD/DEL pairs churned meanwhile; "
            + taken
            + " samples of the IPAddresses of every pool checked, "
            + failed.size()
            + " not answered; addresses held twice: "
            + all);
    org.assertj.core.api.Assertions.assertThat(failed)
        .as("samples the API server did not answer (each one unchecked)")
        .isEmpty();
    org.assertj.core.api.Assertions.assertThat(taken).as("samples taken").isPositive();
    org.assertj.core.api.Assertions.assertThat(all)
        .as("addresses held by two IPAddresses at once")
        .isEmpty();
  }

  /**
   * A test's end when its rigs are closed by others ({@link KipamProcesses}): {@link
   * #closeAndCheck} of {@code meanwhile}, when it was started.
   */
  public static void check(String test, ChurnAndSample meanwhile, ChurnAndSample... others)
      throws InterruptedException {
    if (meanwhile != null) {
      meanwhile.closeAndCheck(test, others);
    }
  }

  /**
   * A test's end: {@link #closeAndCheck} of {@code meanwhile} (when it was started), then every rig
   * closed whatever the check found.
   */
  public static void stop(
      String test, List<NodeRig> rigs, ChurnAndSample meanwhile, ChurnAndSample... others)
      throws InterruptedException {
    try {
      check(test, meanwhile, others);
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
    sampler.close();
    SAMPLED.remove(pool);
  }
}
