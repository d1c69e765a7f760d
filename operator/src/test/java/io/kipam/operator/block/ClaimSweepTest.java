package io.kipam.operator.block;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class ClaimSweepTest {

  @Test
  void theOrdinalOfAStatefulSetPodsClaimIsReadFromItsName() {
    assertThat(ClaimSweep.ordinal("web-0.tenant", "web")).hasValue(0);
    assertThat(ClaimSweep.ordinal("web-12.pods.v4", "web")).hasValue(12);
    assertThat(ClaimSweep.ordinal("web-db-3.tenant", "web-db")).hasValue(3);
  }

  @Test
  void aNameOfAnotherShapeHasNoOrdinal() {
    assertThat(ClaimSweep.ordinal("db-0.tenant", "web")).isEqualTo(OptionalInt.empty());
    assertThat(ClaimSweep.ordinal("web-db-3.tenant", "web")).isEmpty();
    assertThat(ClaimSweep.ordinal("web-.tenant", "web")).isEmpty();
    assertThat(ClaimSweep.ordinal("web-1234567890.tenant", "web")).isEmpty();
  }
}
