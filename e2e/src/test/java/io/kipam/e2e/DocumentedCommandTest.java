package io.kipam.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which lines of a page {@link DocumentedCommand} takes for commands, and their shown output. */
class DocumentedCommandTest {

  @Test
  void takesShellBlockLinesJoinedWithoutCommentsAndDollarLinesWithTheirOutput() {
    List<String> page =
        List.of(
            "Run `kubectl get pods` to see them.",
            "```sh",
            "kubectl -n kipam-system exec deploy/kipam-operator -- \\",
            "  /opt/java/bin/java -version",
            "",
            "# a comment line",
            "./mvnw -B verify -DskipIT   # unit tests only",
            "```",
            "```",
            "$ kubectl get ippools.kipam.io",
            "NAME      CIDR",
            "pods-v4   10.244.0.0/22",
            "",
            "not a command",
            "```");

    List<DocumentedCommand> commands = DocumentedCommand.inFile("docs/x.md", page);

    assertThat(commands)
        .extracting(DocumentedCommand::where, DocumentedCommand::command)
        .containsExactly(
            tuple(
                "docs/x.md:3",
                "kubectl -n kipam-system exec deploy/kipam-operator -- /opt/java/bin/java -version"),
            tuple("docs/x.md:7", "./mvnw -B verify -DskipIT"),
            tuple("docs/x.md:10", "kubectl get ippools.kipam.io"));
    assertThat(commands.get(0).shownOutput()).isEmpty();
    assertThat(commands.get(2).shownOutput())
        .containsExactly("NAME      CIDR", "pods-v4   10.244.0.0/22");
  }
}
