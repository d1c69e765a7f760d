package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SocketPathTest {

  private static final Path DEFAULT = Path.of("/run/kipam/kipam.sock");

  private static Path resolve(String config) {
    return SocketPath.resolve(MiniJson.parseObject(config), DEFAULT);
  }

  @Test
  void theNamedSocketIsUsed() {
    assertThat(resolve("{\"ipam\":{\"socket\":\"/run/kipam/k.sock\",\"x\":[1,2.5e3,true,null]}}"))
        .isEqualTo(Path.of("/run/kipam/k.sock"));
  }

  @Test
  void withoutANamedSocketTheDefaultIsUsed() {
    assertThat(resolve("{\"ipam\":{\"type\":\"kipam\"}}")).isEqualTo(DEFAULT);
    assertThat(resolve("{\"ipam\":{\"socket\":null}}")).isEqualTo(DEFAULT);
    assertThat(resolve("{\"ipam\":\"kipam\"}")).isEqualTo(DEFAULT);
    assertThat(resolve("not json")).isEqualTo(DEFAULT);
  }

  @Test
  void aPathOfTheLongestLengthASocketMayHaveIsAccepted() {
    int room = SocketPath.MAX_BYTES - "/run/kipam/".length();
    String longest = "/run/kipam/" + "é".repeat(room / 2) + "s".repeat(room % 2);

    assertThat(SocketPath.resolve(Map.of("ipam", Map.of("socket", longest)), DEFAULT))
        .isEqualTo(Path.of(longest));
  }

  @Test
  void problemsNameTheFieldAndWhatIsWrong() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> resolve("{\"ipam\":{\"socket\":\"run/kipam.sock\"}}"))
        .withMessage("ipam.socket 'run/kipam.sock' must be an absolute path");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> resolve("{\"ipam\":{\"socket\":\"/run/k\\u0000.sock\"}}"))
        .withMessage("ipam.socket must not contain a NUL character");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> resolve("{\"ipam\":{\"socket\":5}}"))
        .withMessage("ipam.socket must be a string, not a number");
    // 101 characters but 201 bytes; a message quotes the first 80 characters only.
    String tooLong = "/" + "é".repeat(100);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> SocketPath.resolve(Map.of("ipam", Map.of("socket", tooLong)), DEFAULT))
        .withMessageStartingWith("ipam.socket '/éééé")
        .withMessageEndingWith(
            "...(101 characters)' is longer than the 107 bytes a unix socket path may have");
  }

  @Test
  void aNamedSocketOutsideTheDefaultsDirectoryIsRefusedWithItsOwnRule() {
    assertThatThrownBy(() -> resolve("{\"ipam\":{\"socket\":\"/tmp/x.sock\"}}"))
        .isInstanceOfSatisfying(
            SocketDirectory.Outside.class,
            e ->
                assertThat(e.details())
                    .isEqualTo(
                        "kipam connects only to a socket in /run/kipam, the directory its"
                            + " installer configured; leave ipam.socket out for the default"
                            + " socket"))
        .hasMessage("ipam.socket '/tmp/x.sock' is not a path inside /run/kipam");
  }
}
