package io.kipam.cni.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * stdin can carry credentials (a kubeconfig pasted into the wrong field, tokens in {@code args}).
 * Whatever goes wrong, the error a runtime logs must not repeat them.
 */
class SecretsInMessagesTest {

  private static final String SECRET = "c2VjcmV0LXRva2VuLWRvLW5vdC1sZWFr";

  private static final String SECRET_FIELDS =
      "\"password\":\"" + SECRET + "\",\"args\":{\"token\":\"" + SECRET + "\"}";

  static Stream<Arguments> failingCalls() {
    return Stream.of(
        Arguments.of(
            "invalid ipam type",
            "ADD",
            Calls.withIpam("{\"type\":\"x\",\"pools\":[\"a\"],\"kubeconfig\":\"" + SECRET + "\"}")),
        Arguments.of(
            "unknown ipam key holding a secret",
            "ADD",
            Calls.withIpam("{\"type\":\"kipam\",\"pools\":[\"a\"],\"token\":\"" + SECRET + "\"}")),
        Arguments.of(
            "secret as an unquoted token",
            "ADD",
            "{\"cniVersion\":\"1.0.0\",\"token\":" + SECRET + "}"),
        Arguments.of(
            "secret in a truncated document",
            "ADD",
            "{\"cniVersion\":\"1.0.0\",\"token\":\"" + SECRET),
        Arguments.of(
            "secret in a duplicate key", "ADD", "{\"" + SECRET + "\":1,\"" + SECRET + "\":2}"),
        Arguments.of(
            "secret where a list belongs",
            "ADD",
            Calls.withIpam("{\"type\":\"kipam\",\"pools\":{\"p\":\"" + SECRET + "\"}}")),
        Arguments.of(
            "secret as a pool's type",
            "ADD",
            Calls.withIpam("{\"type\":\"kipam\",\"pools\":[{\"s\":\"" + SECRET + "\"}]}")),
        Arguments.of("unsupported version", "ADD", Calls.config("0.2.0", SECRET_FIELDS)),
        Arguments.of("check without prevResult", "CHECK", Calls.config("1.0.0", SECRET_FIELDS)),
        Arguments.of("gc without attachments", "GC", Calls.config("1.1.0", SECRET_FIELDS)),
        Arguments.of(
            "prevResult with a secret where an object belongs",
            "DEL",
            Calls.config("1.0.0", "\"prevResult\":{\"ips\":\"" + SECRET + "\"}")),
        Arguments.of(
            "secret where the name belongs",
            "ADD",
            "{\"cniVersion\":\"1.0.0\",\"name\":{\"t\":\"" + SECRET + "\"}}"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("failingCalls")
  void noErrorRepeatsASecretFromStdin(String description, String command, String stdin) {
    Map<String, String> env = Calls.env(command);
    CniException e = catchThrowableOfType(CniException.class, () -> Calls.parse(env, stdin));
    assertThat(e).as(description).isNotNull();
    assertThat(e.getMessage()).doesNotContain(SECRET);
    assertThat(CniResponse.error(e).stdoutText()).doesNotContain(SECRET);
    for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
      assertThat(String.valueOf(cause.getMessage())).doesNotContain(SECRET);
    }
  }
}
