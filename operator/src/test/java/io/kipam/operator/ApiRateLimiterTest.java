package io.kipam.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;

class ApiRateLimiterTest {

  @Test
  void watchesAndLeaseRequestsAreNotCounted() {
    assertThat(ApiRateLimiter.limited(URI.create("https://api/apis/kipam.io/v1alpha1/ipblocks")))
        .isTrue();
    assertThat(
            ApiRateLimiter.limited(
                URI.create(
                    "https://api/apis/kipam.io/v1alpha1/ipblocks?labelSelector=a&watch=true")))
        .isFalse();
    assertThat(
            ApiRateLimiter.limited(
                URI.create(
                    "https://api/apis/coordination.k8s.io/v1/namespaces/kipam-system/leases/x")))
        .isFalse();
  }
}
