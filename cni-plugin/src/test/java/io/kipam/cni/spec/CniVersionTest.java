package io.kipam.cni.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class CniVersionTest {

  @ParameterizedTest
  @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
  void parsesEverySupportedVersionToItself(String text) {
    assertThat(CniVersion.parse(text).text()).isEqualTo(text);
  }

  @ParameterizedTest
  @ValueSource(strings = {"0.1.0", "0.2.0", "1.2.0", "1.0", "v1.0.0", "1.0.0 ", ""})
  void refusesUnsupportedVersionsWithCode1NamingTheSupportedOnes(String text) {
    CniException e = catchThrowableOfType(CniException.class, () -> CniVersion.parse(text));
    assertThat(e.code()).isEqualTo(CniErrorCode.INCOMPATIBLE_VERSION);
    assertThat(e.code().code()).isEqualTo(1);
    assertThat(e.details())
        .contains(Json.quote(text))
        .contains("kipam supports 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0");
  }

  @Test
  void aMissingVersionIsIncompatibleAndSaysSo() {
    CniException e = catchThrowableOfType(CniException.class, () -> CniVersion.parse(null));
    assertThat(e.code().code()).isEqualTo(1);
    assertThat(e.details()).startsWith("the network configuration has no cniVersion");
  }

  @Test
  void versionAnswerListsEverySupportedVersion() {
    assertThat(CniVersion.V0_4_0.versionAnswerJson())
        .isEqualTo(
            "{\"cniVersion\":\"0.4.0\","
                + "\"supportedVersions\":[\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}");
  }

  @Test
  void onlyVersionsBefore100PutTheFamilyInEachIp() {
    assertThat(Stream.of(CniVersion.values()).filter(CniVersion::ipsCarryVersion))
        .containsExactly(CniVersion.V0_3_0, CniVersion.V0_3_1, CniVersion.V0_4_0);
  }

  static Stream<Arguments> everyCommandInEveryVersion() {
    List<Arguments> cases = new ArrayList<>();
    for (CniCommand command : CniCommand.values()) {
      for (CniVersion version : CniVersion.values()) {
        boolean allowed =
            switch (command) {
              case ADD, DEL, VERSION -> true;
              case CHECK -> version.compareTo(CniVersion.V0_4_0) >= 0;
              case GC, STATUS -> version == CniVersion.V1_1_0;
            };
        cases.add(Arguments.of(command, version, allowed));
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} in {1}: allowed={2}")
  @MethodSource("everyCommandInEveryVersion")
  void everyCommandIsAcceptedExactlyInTheVersionsThatHaveIt(
      CniCommand command, CniVersion version, boolean allowed) {
    assertThat(version.allows(command)).isEqualTo(allowed);
    byte[] stdin = Calls.bytes(Calls.fullConfig(version.text()));
    if (allowed) {
      CniRequest request = CniRequest.parse(Calls.env(command), stdin);
      assertThat(request.command()).isEqualTo(command);
      assertThat(request.cniVersion()).isEqualTo(version);
      assertThat(request.config().isPresent()).isEqualTo(command != CniCommand.VERSION);
    } else {
      CniException e =
          catchThrowableOfType(
              CniException.class, () -> CniRequest.parse(Calls.env(command), stdin));
      assertThat(e.code().code()).isEqualTo(1);
      assertThat(e.msg()).isEqualTo("CNI version " + version + " does not allow " + command);
      assertThat(e.details()).contains("cniVersion to " + command.since() + " or later");
      assertThat(e.callerVersion()).contains(version);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"add", "Del", "INIT", "GET", "FINALIZE"})
  void unknownCommandsAreRefusedWithCode4(String command) {
    CniException e =
        catchThrowableOfType(
            CniException.class, () -> Calls.parse(Calls.env(command), Calls.fullConfig("1.1.0")));
    assertThat(e.code().code()).isEqualTo(4);
    assertThat(e.msg()).contains("CNI_COMMAND");
    assertThat(e.details())
        .contains(Json.quote(command))
        .contains("use one of ADD, DEL, CHECK, GC, STATUS, VERSION");
  }
}
