package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/** The CNI executable must run on a bare JVM: jdeps proves it needs java.base and itself only. */
class ShimDependenciesTest {

  private static String jdeps(String... args) {
    ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow();
    StringWriter out = new StringWriter();
    int exit = jdeps.run(new PrintWriter(out), new PrintWriter(out), args);
    assertThat(exit).as(out.toString()).isZero();
    return out.toString();
  }

  @Test
  void executableDependsOnJavaBaseOnly() {
    String classes = Path.of("target/classes").toAbsolutePath().toString();
    String verbose = jdeps("-verbose:class", "-include", "io\\.kipam\\.cni\\.shim\\..*", classes);

    // Summary lines name whole modules; indented lines are class-to-class edges.
    List<String> modules =
        verbose.lines().filter(l -> l.contains("->") && !l.startsWith(" ")).toList();
    assertThat(modules).containsExactly("classes -> java.base");
    List<String> edges =
        verbose.lines().filter(l -> l.contains("->") && l.startsWith(" ")).toList();
    assertThat(edges).isNotEmpty();
    assertThat(edges)
        .allSatisfy(
            edge -> {
              String target = edge.substring(edge.indexOf("->") + 2).trim();
              assertThat(target)
                  .matches("(java\\.\\S+\\s+java\\.base|io\\.kipam\\.cni\\.shim\\.\\S+.*)");
            });
  }
}
