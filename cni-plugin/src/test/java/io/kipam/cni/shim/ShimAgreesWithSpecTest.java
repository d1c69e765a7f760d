package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.cni.spec.CniRequest;
import io.kipam.cni.spec.CniVersion;
import org.junit.jupiter.api.Test;

/**
 * The executable keeps its own copies of the supported versions and the configuration size limit,
 * since it may not depend on the daemon's classes; this test keeps the copies equal.
 */
class ShimAgreesWithSpecTest {

  @Test
  void supportedVersionsAndSizeLimitMatchTheDaemons() {
    assertThat(Kipam.SUPPORTED_VERSIONS).isEqualTo(CniVersion.supportedTexts());
    assertThat(Kipam.NEWEST_VERSION).isEqualTo(CniVersion.newest().text());
    assertThat(Kipam.STDIN_LIMIT).isEqualTo(CniRequest.MAX_CONFIG_BYTES);
  }
}
