package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WatchCountTest {

  @Test
  void namesACoreResourceByItsPlainName() {
    assertThat(WatchCount.resource("/api/v1/nodes")).isEqualTo("nodes");
    assertThat(WatchCount.resource("/api/v1/namespaces/default/pods")).isEqualTo("pods");
  }

  @Test
  void namesAGroupResourceWithItsGroup() {
    assertThat(WatchCount.resource("/apis/kipam.io/v1alpha1/ippools"))
        .isEqualTo("ippools.kipam.io");
    assertThat(WatchCount.resource("/apis/kipam.io/v1alpha1/namespaces/a/ipaddresses"))
        .isEqualTo("ipaddresses.kipam.io");
  }
}
