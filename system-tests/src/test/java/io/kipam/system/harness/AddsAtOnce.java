package io.kipam.system.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.IntUnaryOperator;

/**
 * Every node's pods ADDed at the same time, one caller per node, as a burst of pods scheduled over
 * a cluster: node {@code n} ADDs its pods {@code from(n)} up to {@code pods[n]}, one after the
 * other, each retried as a runtime retries ({@link NodeRig#addRetried}).
 */
public final class AddsAtOnce {

  private AddsAtOnce() {}

  /**
   * Runs the burst on {@code rigs} and hands every outcome to {@code check} in this thread, node by
   * node in pod order, as each node's caller ends; the callers still running are interrupted when a
   * check or a caller fails.
   */
  public static void run(
      List<NodeRig> rigs,
      String pool,
      int[] pods,
      IntUnaryOperator from,
      Duration retries,
      Consumer<CniCall.Outcome> check)
      throws Exception {
    ExecutorService callers = Executors.newFixedThreadPool(pods.length);
    List<Future<List<CniCall.Outcome>>> outcomes = new ArrayList<>();
    try {
      for (int n = 0; n < pods.length; n++) {
        NodeRig rig = rigs.get(n);
        int first = from.applyAsInt(n);
        int count = pods[n];
        outcomes.add(
            callers.submit(
                () -> {
                  List<CniCall.Outcome> mine = new ArrayList<>();
                  for (int i = first; i < count; i++) {
                    mine.add(rig.addRetried(List.of(pool), i, retries));
                  }
                  return mine;
                }));
      }
      for (Future<List<CniCall.Outcome>> f : outcomes) {
        f.get().forEach(check);
      }
    } finally {
      callers.shutdownNow();
    }
  }
}
