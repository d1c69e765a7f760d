package io.kipam.api.net;

import org.junit.jupiter.api.Test;

/**
 * Random pools of both families from seeded generators, each checked by {@link
 * PoolLayoutInvariants}. Failures name the seed of the case.
 */
class PoolLayoutPropertyTest {

  @Test
  void smallPoolsAgreeWithBruteForceOnEveryAddressAndBlock() {
    Cases.run(
        1_500,
        random -> {
          IpFamily family = RandomNets.family(random);
          // Up to 2^12 addresses, so every address can be judged one by one.
          int prefixLength = family.bits() - random.nextInt(13);
          PoolCase spec = PoolCase.random(random, family, prefixLength);
          check(spec, random);
        });
  }

  @Test
  void poolsOfEverySizeAgreeWithTheSegmentSweep() {
    Cases.run(
        1_500,
        random -> {
          IpFamily family = RandomNets.family(random);
          int prefixLength = random.nextInt(family.bits() + 1);
          PoolCase spec = PoolCase.random(random, family, prefixLength);
          check(spec, random);
        });
  }

  private static void check(PoolCase spec, java.util.Random random) {
    try {
      PoolLayoutInvariants.check(spec, random);
    } catch (AssertionError | RuntimeException e) {
      throw new AssertionError(spec + ": " + e.getMessage(), e);
    }
  }
}
