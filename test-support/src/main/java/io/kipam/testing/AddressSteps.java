package io.kipam.testing;

import java.time.Duration;
import java.util.Random;

/**
 * The generator of kipam's model-based tests: a seeded sequence of what happens to a cluster's
 * addresses — ADDs of each kind (dynamic, chosen, claimed, pool-annotated) on a primary and a
 * secondary network, DELs, pod deletions with and without DEL, IPAMClaim deletions, a pool's
 * deletion and the passing of time. The same seed gives the same sequence; each test interprets it
 * against its world (the fakes of kipam-node's allocator, or a real control plane with daemons and
 * kipam-operator). Choices that depend on the world (which live pod, which address) are fractions
 * the world maps onto what it has.
 */
public final class AddressSteps {

  /** The networks a step may ADD on: the pod's primary interface and a Multus secondary one. */
  public enum Network {
    PRIMARY("eth0"),
    SECONDARY("net1");

    private final String ifName;

    Network(String ifName) {
      this.ifName = ifName;
    }

    public String ifName() {
      return ifName;
    }
  }

  /**
   * How a new pod asks: nothing, a pool annotation of its own network, an annotation naming pools
   * of both networks, a per-family annotation naming the other network's pool, or an IPAMClaim of
   * its primary interface.
   */
  public enum Template {
    PLAIN,
    OWN_NETWORK_POOL,
    BOTH_NETWORKS_POOLS,
    OTHER_NETWORKS_POOL,
    CLAIMED
  }

  /** One step. */
  public sealed interface Step {}

  /**
   * An ADD on {@code network} for a live pod ({@code pod}, a fraction of the live pods) or a new
   * one ({@code newPod}: its {@code namespace}, {@code node} and {@code template} as indexes and a
   * kind); {@code chosen}, when not negative, asks for the address at that fraction of the range by
   * name ({@code IP=}); {@code claim} picks which of the namespace's claims a claimed pod names.
   */
  public record Add(
      Network network,
      boolean newPod,
      double pod,
      int namespace,
      int node,
      Template template,
      int claim,
      double chosen)
      implements Step {
    public boolean asksByName() {
      return chosen >= 0;
    }
  }

  /** A DEL of one held address ({@code which}: a fraction of the addresses held). */
  public record Del(double which) implements Step {}

  /** A pod deleted ({@code which} of the live pods): after its DELs, or forced without them. */
  public record DeletePod(double which, boolean forced) implements Step {}

  /** An IPAMClaim deleted ({@code which} of the claims) once no pod has its address; made again. */
  public record DeleteClaim(double which) implements Step {}

  /** The secondary pool of the primary network (the one annotations choose) is deleted. */
  public record DeletePool() implements Step {}

  /** Time passes. */
  public record Pass(Duration time) implements Step {}

  /** What a test's world does with each kind of step. */
  public interface Actions {
    void add(Add add);

    void del(double which);

    void deletePod(double which, boolean forced);

    void deleteClaim(double which);

    void deletePool();

    void pass(Duration time);
  }

  /** Hands {@code step} to the action of its kind. */
  public static void apply(Step step, Actions actions) {
    if (step instanceof Add add) {
      actions.add(add);
    } else if (step instanceof Del del) {
      actions.del(del.which());
    } else if (step instanceof DeletePod delete) {
      actions.deletePod(delete.which(), delete.forced());
    } else if (step instanceof DeleteClaim delete) {
      actions.deleteClaim(delete.which());
    } else if (step instanceof DeletePool) {
      actions.deletePool();
    } else if (step instanceof Pass pass) {
      actions.pass(pass.time());
    }
  }

  private final Random random;

  public AddressSteps(long seed) {
    this.random = new Random(seed);
  }

  /** The next step. */
  public Step next() {
    double r = random.nextDouble();
    if (r < 0.50) {
      return new Add(
          r < 0.30 ? Network.PRIMARY : Network.SECONDARY,
          random.nextInt(3) == 0,
          random.nextDouble(),
          random.nextInt(3),
          random.nextInt(3),
          Template.values()[random.nextInt(Template.values().length)],
          random.nextInt(2),
          random.nextInt(4) == 0 ? random.nextDouble() : -1);
    }
    if (r < 0.68) {
      return new Del(random.nextDouble());
    }
    if (r < 0.74) {
      return new DeletePod(random.nextDouble(), random.nextBoolean());
    }
    if (r < 0.77) {
      return new DeleteClaim(random.nextDouble());
    }
    if (r < 0.78) {
      return new DeletePool();
    }
    return new Pass(Duration.ofMillis(random.nextInt(12_000)));
  }

  /** {@code fraction} of {@code size}, as an index. */
  public static int pick(double fraction, int size) {
    return Math.min(size - 1, (int) (fraction * size));
  }
}
