package io.kipam.operator.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CheckOptionsTest {

  @Test
  void withoutOptionsItWritesTextForEveryPoolWithTheKubeconfigOfTheEnvironment() {
    CheckOptions options = CheckOptions.parse(List.of(), Map.of("KUBECONFIG", "config/kc.yaml"));

    assertThat(options.output()).isEqualTo(CheckOptions.Output.TEXT);
    assertThat(options.pools()).isEmpty();
    assertThat(options.kubeconfig()).contains(Path.of("config/kc.yaml"));
    assertThat(options.help()).isFalse();
  }

  @Test
  void withoutKubeconfigAnywhereTheClientResolvesItself() {
    assertThat(CheckOptions.parse(List.of(), Map.of()).kubeconfig()).isEqualTo(Optional.empty());
  }

  @Test
  void optionsOverrideTheEnvironmentAndPoolsRepeat() {
    CheckOptions options =
        CheckOptions.parse(
            List.of("--kubeconfig", "a.yaml", "--output=json", "--pool", "p1", "--pool=p2"),
            Map.of("KUBECONFIG", "b.yaml"));

    assertThat(options.kubeconfig()).contains(Path.of("a.yaml"));
    assertThat(options.output()).isEqualTo(CheckOptions.Output.JSON);
    assertThat(options.pools()).containsExactlyInAnyOrder("p1", "p2");
  }

  @Test
  void helpIsUnderstood() {
    assertThat(CheckOptions.parse(List.of("--help"), Map.of()).help()).isTrue();
    assertThat(CheckOptions.parse(List.of("-h"), Map.of()).help()).isTrue();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--verbose | unknown option --verbose",
        "--output yaml | --output must be text or json, not yaml",
        "--output | --output needs a value",
        "--kubeconfig | --kubeconfig needs a value",
        "--pool --output json | --pool needs a value",
        "--pool= | --pool needs a value, not an empty one",
        "extra | unexpected argument extra",
      })
  void everyBadArgumentIsNamed(String args, String message) {
    assertThatThrownBy(() -> CheckOptions.parse(List.of(args.split(" ")), Map.of()))
        .isInstanceOf(CheckOptions.Invalid.class)
        .hasMessageContaining(message);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--verbose | kipam-operator check: unknown option --verbose",
        "--output yaml | kipam-operator check: --output must be text or json, not yaml",
        "--kubeconfig | kipam-operator check: --kubeconfig needs a value",
      })
  void theCommandExitsTwoWithOneLineOnStderrNamingTheArgument(String args, String message) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int code =
        CheckCommand.run(
            List.of(args.split(" ")), Map.of(), new PrintStream(out), new PrintStream(err));

    assertThat(code).isEqualTo(2);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(err.toString(StandardCharsets.UTF_8)).startsWith(message).hasLineCount(1);
  }

  @Test
  void anUnreadableKubeconfigExitsTwoNamingIt() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int code =
        CheckCommand.run(
            List.of("--kubeconfig", "no-such-dir/kubeconfig"),
            Map.of(),
            new PrintStream(new ByteArrayOutputStream()),
            new PrintStream(err));

    assertThat(code).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("cannot read the kubeconfig no-such-dir/kubeconfig")
        .hasLineCount(1);
  }

  @Test
  void helpPrintsTheUsageAndExitsZero() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();

    int code =
        CheckCommand.run(
            List.of("--help"),
            Map.of(),
            new PrintStream(out),
            new PrintStream(new ByteArrayOutputStream()));

    assertThat(code).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8))
        .startsWith("usage: kipam-operator check")
        .contains("--output text|json");
  }
}
