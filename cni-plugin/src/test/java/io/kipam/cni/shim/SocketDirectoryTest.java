package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SocketDirectoryTest {

  private static final SocketDirectory RUN_KIPAM =
      SocketDirectory.of(Path.of("/run/kipam/kipam.sock"));

  @TempDir Path dir;

  @Test
  void theDirectoryIsTheInstalledSocketsWrittenClean() {
    assertThat(RUN_KIPAM.dir()).isEqualTo(Path.of("/run/kipam"));
    assertThat(SocketDirectory.of(Path.of("/run//kipam/./x/../kipam.sock")).dir())
        .isEqualTo(Path.of("/run/kipam"));
    assertThat(SocketDirectory.of(Path.of("/kipam.sock")).dir()).isEqualTo(Path.of("/"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "/run/kipam/other.sock",
        "/run/kipam//other.sock",
        "/run/kipam/./other.sock",
        "/run/kipam/sub/../other.sock",
        "/run/other/../kipam/other.sock"
      })
  void aSocketInTheDirectoryIsConnectedToByItsCleanedPath(String socket) {
    assertThat(RUN_KIPAM.confine(socket)).isEqualTo(Path.of("/run/kipam/other.sock"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "/tmp/x.sock",
        "/run/kipam/../tmp/x.sock",
        "/run/kipam/../../run/kipamx/a.sock",
        "/run/kipamx/a.sock",
        "/run/kipam",
        "/run/kipam/",
        "/run/kipam/.",
        "/run/kipam/sub/../../x.sock",
        "/"
      })
  void aSocketOutsideTheDirectoryIsRefused(String socket) {
    assertThatThrownBy(() -> RUN_KIPAM.confine(socket))
        .isInstanceOf(SocketDirectory.Outside.class)
        .hasMessage("ipam.socket '" + socket + "' is not a path inside /run/kipam");
  }

  @Test
  void inTheRootDirectoryEverySocketButTheRootIsInside() {
    SocketDirectory root = SocketDirectory.of(Path.of("/kipam.sock"));

    assertThat(root.confine("/tmp/x.sock")).isEqualTo(Path.of("/tmp/x.sock"));
    assertThatThrownBy(() -> root.confine("/"))
        .hasMessage("ipam.socket '/' is not a path inside /");
  }

  @Test
  void symbolicLinksMustEndInsideTheDirectory() throws Exception {
    Path run = Files.createDirectories(dir.resolve("run"));
    Path outside = Files.createDirectories(dir.resolve("outside"));
    Files.createSymbolicLink(run.resolve("escape"), outside);
    Files.createSymbolicLink(run.resolve("out.sock"), outside.resolve("x.sock"));
    Files.createFile(outside.resolve("x.sock"));
    Files.createSymbolicLink(run.resolve("in.sock"), run.resolve("kipam.sock"));
    Files.createFile(run.resolve("kipam.sock"));
    SocketDirectory confined = SocketDirectory.of(run.resolve("kipam.sock"));

    for (String escape : new String[] {"/escape/x.sock", "/escape/none.sock", "/out.sock"}) {
      assertThatThrownBy(() -> confined.confine(run + escape))
          .as(escape)
          .isInstanceOf(SocketDirectory.Outside.class)
          .hasMessageEndingWith("' leads outside " + run + " through a symbolic link");
    }
    assertThat(confined.confine(run + "/in.sock")).isEqualTo(run.resolve("in.sock"));
    assertThat(confined.confine(run + "/absent/x.sock")).isEqualTo(run.resolve("absent/x.sock"));
  }

  @Test
  void aDirectoryThatIsALinkItselfStillHoldsItsSockets() throws Exception {
    Path real = Files.createDirectories(dir.resolve("real"));
    Path alias = Files.createSymbolicLink(dir.resolve("alias"), real);
    Files.createFile(real.resolve("other.sock"));
    SocketDirectory confined = SocketDirectory.of(alias.resolve("kipam.sock"));

    assertThat(confined.confine(alias + "/other.sock")).isEqualTo(alias.resolve("other.sock"));
  }
}
