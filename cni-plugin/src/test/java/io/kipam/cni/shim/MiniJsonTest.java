package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MiniJsonTest {

  private static String nestedArrays(int depth) {
    return "{\"cniVersion\":\"1.0.0\",\"x\":" + "[".repeat(depth) + "]".repeat(depth) + "}";
  }

  @Test
  void readsNestingUpToTheCap() {
    // The top-level object is one level, so the arrays may take the rest.
    assertThat(MiniJson.parseObject(nestedArrays(MiniJson.MAX_DEPTH - 1)))
        .containsEntry("cniVersion", "1.0.0");
  }

  @Test
  void deeperNestingThanTheCapIsUnreadableInsteadOfOverflowingTheStack() {
    // Key sets only: a failure message must not try to print a structure thousands of levels deep.
    assertThat(MiniJson.parseObject(nestedArrays(MiniJson.MAX_DEPTH)).keySet()).isEmpty();
    assertThat(MiniJson.parseObject(nestedArrays(100_000)).keySet()).isEmpty();
    assertThat(MiniJson.parseObject("{\"a\":".repeat(3_000) + "1" + "}".repeat(3_000)).keySet())
        .isEmpty();
  }

  @Test
  void malformedTextIsUnreadable() {
    assertThat(MiniJson.parseObject("{\"cniVersion\": ")).isEmpty();
    assertThat(MiniJson.parseObject("{\"s\":\"\\uZZZZ\"}")).isEmpty();
    assertThat(MiniJson.parseObject("[1]")).isEmpty();
    assertThat(MiniJson.parseObject("")).isEmpty();
  }
}
