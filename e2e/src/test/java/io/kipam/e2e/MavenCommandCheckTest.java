package io.kipam.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.testing.ControlPlaneBinaries;
import org.junit.jupiter.api.Test;

/** {@link MavenCommandCheck} against this build: what holds, and each kind of mistake. */
class MavenCommandCheckTest {

  private final MavenCommandCheck check =
      new MavenCommandCheck(ControlPlaneBinaries.repositoryRoot());

  @Test
  void aCommandOfThisBuildHolds() {
    assertThat(
            check.problems(
                "./mvnw -B -pl system-tests -am verify -Pbenchmark -DskipIT -DskipE2E"
                    + " -Dit.test=NodeBenchmark -Dtest='NoSuchTest*'"
                    + " -Dsurefire.failIfNoSpecifiedTests=false"))
        .isEmpty();
  }

  @Test
  void namesAMissingModuleClassProfilePropertyAndGoal() {
    assertThat(
            check.problems(
                "./mvnw -B -pl nowhere verfy -Pnoprofile -Dkipam.nothing=1 -Dit.test=NoBenchmark"))
        .hasSize(5)
        .anyMatch(p -> p.startsWith("-pl nowhere"))
        .anyMatch(p -> p.startsWith("verfy"))
        .anyMatch(p -> p.startsWith("-Pnoprofile"))
        .anyMatch(p -> p.startsWith("-Dkipam.nothing=1"))
        .anyMatch(p -> p.startsWith("-Dit.test=NoBenchmark"));
  }
}
