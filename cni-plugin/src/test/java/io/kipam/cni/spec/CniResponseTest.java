package io.kipam.cni.spec;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class CniResponseTest {

  @Test
  void anErrorIsTheSpecsErrorJsonWithExitCode1() {
    CniException e =
        new CniException(
            CniErrorCode.POOL_EXHAUSTED,
            "pool exhausted",
            "pool 'pods-v4' has 0 of 254 addresses free");
    CniResponse response = CniResponse.error(CniVersion.V0_4_0, e);
    Calls.assertFailure(
        response,
        "{\"cniVersion\":\"0.4.0\",\"code\":100,\"msg\":\"pool exhausted\","
            + "\"details\":\"pool 'pods-v4' has 0 of 254 addresses free\"}");
  }

  @Test
  void anErrorWithoutDetailsHasNoDetailsField() {
    CniResponse response =
        CniResponse.error(
            CniVersion.V1_0_0,
            new CniException(CniErrorCode.TRY_AGAIN_LATER, "kipam-node is not ready", ""));
    assertThat(response.stdoutText())
        .isEqualTo("{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"kipam-node is not ready\"}");
  }

  @Test
  void anErrorWithoutAKnownCallerVersionIsAnsweredInTheNewest() {
    CniResponse response =
        CniResponse.error(new CniException(CniErrorCode.INVALID_ENVIRONMENT, "m", "d"));
    assertThat(response.stdoutText()).startsWith("{\"cniVersion\":\"1.1.0\",\"code\":4,");
  }

  @Test
  void anErrorCarryingTheCallersVersionIsAnsweredInIt() {
    CniException e =
        new CniException(CniErrorCode.INVALID_NETWORK_CONFIG, "m", "d")
            .answeredIn(CniVersion.V0_3_0);
    assertThat(CniResponse.error(e).stdoutText()).startsWith("{\"cniVersion\":\"0.3.0\",");
  }

  @Test
  void successWithoutResultWritesNothingAndExits0() {
    assertThat(CniResponse.empty().stdout()).isEmpty();
    assertThat(CniResponse.empty().exitCode()).isZero();
  }

  @ParameterizedTest
  @EnumSource(CniVersion.class)
  void versionAnswerIsWrittenInTheRequestedVersion(CniVersion version) {
    CniResponse response = CniResponse.version(version);
    assertThat(response.exitCode()).isZero();
    assertThat(response.stdoutText())
        .isEqualTo(
            "{\"cniVersion\":\""
                + version.text()
                + "\",\"supportedVersions\":[\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}");
  }

  @Test
  void stdoutCannotBeChangedFromOutside() {
    CniResponse response = CniResponse.version(CniVersion.V1_1_0);
    response.stdout()[0] = 'X';
    assertThat(response.stdoutText()).startsWith("{");
  }

  @Test
  void errorCodesKeepTheSpecsNumbers() {
    assertThat(CniErrorCode.INCOMPATIBLE_VERSION.code()).isEqualTo(1);
    assertThat(CniErrorCode.UNSUPPORTED_FIELD.code()).isEqualTo(2);
    assertThat(CniErrorCode.UNKNOWN_CONTAINER.code()).isEqualTo(3);
    assertThat(CniErrorCode.INVALID_ENVIRONMENT.code()).isEqualTo(4);
    assertThat(CniErrorCode.IO_FAILURE.code()).isEqualTo(5);
    assertThat(CniErrorCode.DECODING_FAILURE.code()).isEqualTo(6);
    assertThat(CniErrorCode.INVALID_NETWORK_CONFIG.code()).isEqualTo(7);
    assertThat(CniErrorCode.TRY_AGAIN_LATER.code()).isEqualTo(11);
    assertThat(CniErrorCode.PLUGIN_NOT_AVAILABLE.code()).isEqualTo(50);
    assertThat(CniErrorCode.PLUGIN_NOT_AVAILABLE_LIMITED_CONNECTIVITY.code()).isEqualTo(51);
  }

  @Test
  void kipamsOwnCodesAreDistinctAndAtLeast100() {
    assertThat(
            java.util.Arrays.stream(CniErrorCode.values())
                .filter(c -> !c.wellKnown())
                .mapToInt(CniErrorCode::code))
        .allMatch(code -> code >= 100)
        .doesNotHaveDuplicates();
  }
}
