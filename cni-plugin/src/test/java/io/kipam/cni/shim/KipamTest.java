package io.kipam.cni.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KipamTest {

  @TempDir Path dir;

  private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();

  private int run(Map<String, String> env, String stdin) {
    return run(env, new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
  }

  private int run(Map<String, String> env, InputStream stdin) {
    return Kipam.run(env, stdin, new PrintStream(stdout, true, StandardCharsets.UTF_8));
  }

  private int runWithDefaultSocket(Map<String, String> env, String stdin, Path defaultSocket) {
    return Kipam.run(
        env,
        new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
        new PrintStream(stdout, true, StandardCharsets.UTF_8),
        defaultSocket);
  }

  private static String okAnswer(String result) {
    return "HTTP/1.1 200 OK\r\nKipam-Exit-Code: 0\r\nContent-Length: "
        + result.length()
        + "\r\nConnection: close\r\n\r\n"
        + result;
  }

  private String out() {
    return stdout.toString(StandardCharsets.UTF_8);
  }

  private String config(Path socket) {
    return "{\"cniVersion\":\"1.0.0\",\"name\":\"net\",\"ipam\":{\"type\":\"kipam\","
        + "\"pools\":[\"pods-v4\"],\"socket\":"
        + MiniJson.quote(socket.toString())
        + "}}";
  }

  @Test
  void versionIsAnsweredWithoutTheDaemon() {
    int exit = run(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"0.4.0\"}");

    assertThat(exit).isZero();
    assertThat(out())
        .isEqualTo(
            "{\"cniVersion\":\"0.4.0\",\"supportedVersions\":"
                + "[\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}");
  }

  @Test
  void versionOfAnUnknownCniVersionAnswersWithTheNewest() {
    assertThat(run(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"9.9.9\"}")).isZero();
    assertThat(out()).startsWith("{\"cniVersion\":\"1.1.0\"");
  }

  @Test
  void unreachableDaemonIsTryAgainLaterNamingTheSocket() {
    Path socket = dir.resolve("absent.sock");

    int exit = run(Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "c1"), config(socket));

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .startsWith("{\"cniVersion\":\"1.0.0\",\"code\":11,")
        .contains("cannot reach kipam-node at " + socket)
        .contains("running and ready");
  }

  @Test
  void forwardsOnlyCniVariablesAndStdinAndReturnsTheDaemonsAnswer() throws Exception {
    Path socket = dir.resolve("kipam.sock");
    String result = "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.0.0.5/24\"}]}";
    try (FakeDaemon daemon =
        new FakeDaemon(
            socket,
            "HTTP/1.1 200 OK\r\nKipam-Exit-Code: 0\r\nContent-Length: "
                + result.length()
                + "\r\nConnection: close\r\n\r\n"
                + result)) {
      String config = config(socket);
      int exit =
          run(
              Map.of(
                  "CNI_COMMAND", "ADD",
                  "CNI_CONTAINERID", "c1",
                  "CNI_IFNAME", "eth0",
                  "AWS_SECRET_ACCESS_KEY", "not-for-the-daemon"),
              config);

      assertThat(exit).isZero();
      assertThat(out()).isEqualTo(result);
      String request = daemon.request.get(5, TimeUnit.SECONDS);
      assertThat(request).startsWith("POST /v1/cni HTTP/1.1\r\n");
      assertThat(request)
          .contains(
              "{\"env\":{\"CNI_COMMAND\":\"ADD\",\"CNI_CONTAINERID\":\"c1\",\"CNI_IFNAME\":\"eth0\"}")
          .contains(Base64.getEncoder().encodeToString(config.getBytes(StandardCharsets.UTF_8)))
          .doesNotContain("not-for-the-daemon");
    }
  }

  @Test
  void daemonErrorAnswerKeepsItsExitCode() throws Exception {
    Path socket = dir.resolve("kipam.sock");
    String error = "{\"cniVersion\":\"1.0.0\",\"code\":100,\"msg\":\"pool pods-v4 is exhausted\"}";
    try (FakeDaemon daemon =
        new FakeDaemon(
            socket,
            "HTTP/1.1 200 OK\r\nKipam-Exit-Code: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(error.length())
                + "\r\n"
                + error
                + "\r\n0\r\n\r\n")) {
      assertThat(run(Map.of("CNI_COMMAND", "ADD"), config(socket))).isEqualTo(1);
      assertThat(out()).isEqualTo(error);
    }
  }

  @Test
  void answerOtherThanOkIsTryAgainLater() throws Exception {
    Path socket = dir.resolve("kipam.sock");
    try (FakeDaemon daemon =
        new FakeDaemon(
            socket, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 9\r\n\r\nnot ready")) {
      assertThat(run(Map.of("CNI_COMMAND", "ADD"), config(socket))).isEqualTo(1);
      assertThat(out())
          .contains("\"code\":11")
          .contains("answered HTTP 503")
          .contains("\"details\":\"not ready\"");
    }
  }

  @Test
  void versionOfAConfigurationTooDeepToReadAnswersWithTheNewest() {
    String deep = "{\"cniVersion\":\"0.4.0\",\"x\":" + "[".repeat(3_000) + "]".repeat(3_000) + "}";

    assertThat(run(Map.of("CNI_COMMAND", "VERSION"), deep)).isZero();
    assertThat(out()).startsWith("{\"cniVersion\":\"1.1.0\",\"supportedVersions\":");
  }

  @Test
  void configurationTooDeepToReadIsForwardedToTheDefaultSocket() throws Exception {
    Path socket = dir.resolve("default.sock");
    String deep =
        "{\"ipam\":{\"socket\":\"/elsewhere.sock\"},\"x\":"
            + "{\"a\":".repeat(3_000)
            + "1"
            + "}".repeat(3_000)
            + "}";
    try (FakeDaemon daemon = new FakeDaemon(socket, okAnswer("{}"))) {
      int exit = runWithDefaultSocket(Map.of("CNI_COMMAND", "ADD"), deep, socket);

      assertThat(exit).isZero();
      assertThat(out()).isEqualTo("{}");
      assertThat(daemon.request.get(5, TimeUnit.SECONDS))
          .contains(Base64.getEncoder().encodeToString(deep.getBytes(StandardCharsets.UTF_8)));
    }
  }

  @Test
  void unexpectedFailureIsAnInternalErrorOnStdout() {
    InputStream failing =
        new InputStream() {
          @Override
          public int read() {
            throw new StackOverflowError();
          }
        };

    int exit = run(Map.of("CNI_COMMAND", "ADD"), failing);

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .startsWith("{\"cniVersion\":\"1.1.0\",\"code\":999,")
        .contains("StackOverflowError");
  }

  @Test
  void socketPathProblemsAreInvalidConfigurationNotTryAgainLater() {
    Path relative = Path.of("kipam.sock");
    String tooLong = dir.resolve("s".repeat(110)).toString();

    for (String socket : List.of(relative.toString(), "/run/k\u0000.sock", tooLong)) {
      stdout.reset();
      String config =
          "{\"cniVersion\":\"1.0.0\",\"ipam\":{\"type\":\"kipam\",\"socket\":"
              + MiniJson.quote(socket)
              + "}}";

      assertThat(run(Map.of("CNI_COMMAND", "ADD"), config)).as(socket).isEqualTo(1);
      assertThat(out())
          .as(socket)
          .startsWith("{\"cniVersion\":\"1.0.0\",\"code\":7,\"msg\":\"ipam.socket ");
    }
  }

  @Test
  void aSocketThatIsNotAStringIsInvalidConfiguration() {
    int exit = run(Map.of("CNI_COMMAND", "STATUS"), "{\"ipam\":{\"socket\":[\"/a.sock\"]}}");

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .startsWith(
            "{\"cniVersion\":\"1.1.0\",\"code\":7,"
                + "\"msg\":\"ipam.socket must be a string, not a list\"");
  }

  /** Runs the call on another thread, so a call that never returns fails the test instead. */
  private int runAsync(Map<String, String> env, String stdin) throws Exception {
    CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> run(env, stdin));
    await().atMost(Duration.ofSeconds(60)).until(exit::isDone);
    return exit.get();
  }

  @Test
  void daemonThatNeverAnswersIsTryAgainLaterOnceTheDeadlinePasses() throws Exception {
    Path socket = dir.resolve("kipam.sock");
    try (FakeDaemon daemon = FakeDaemon.thatNeverAnswers(socket)) {
      int exit =
          runAsync(Map.of("CNI_COMMAND", "ADD", "KIPAM_TIMEOUT_SECONDS", "1"), config(socket));

      assertThat(exit).isEqualTo(1);
      assertThat(daemon.request).isCompleted();
      assertThat(out())
          .startsWith("{\"cniVersion\":\"1.0.0\",\"code\":11,")
          .contains("kipam-node at " + socket + " did not answer within 1 s");
    }
  }

  @Test
  void daemonThatNeverReadsTheCallIsTryAgainLaterOnceTheDeadlinePasses() throws Exception {
    Path socket = dir.resolve("kipam.sock");
    // Bound but never accepting: the connection completes in the backlog, and a call larger than
    // the socket's buffers blocks while it is sent.
    try (ServerSocketChannel deaf = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      deaf.bind(UnixDomainSocketAddress.of(socket));
      String config =
          "{\"ipam\":{\"socket\":"
              + MiniJson.quote(socket.toString())
              + "},\"padding\":\""
              + "x".repeat(Kipam.STDIN_LIMIT - 200)
              + "\"}";

      int exit = runAsync(Map.of("CNI_COMMAND", "DEL", "KIPAM_TIMEOUT_SECONDS", "1"), config);

      assertThat(exit).isEqualTo(1);
      assertThat(out())
          .startsWith("{\"cniVersion\":\"1.1.0\",\"code\":11,")
          .contains("did not answer within 1 s");
    }
  }

  @Test
  void statusOfADaemonThatNeverAnswersIsNotAvailable() throws Exception {
    Path socket = dir.resolve("kipam.sock");
    try (FakeDaemon daemon = FakeDaemon.thatNeverAnswers(socket)) {
      int exit =
          runAsync(Map.of("CNI_COMMAND", "STATUS", "KIPAM_TIMEOUT_SECONDS", "1"), config(socket));

      assertThat(exit).isEqualTo(1);
      assertThat(out())
          .startsWith("{\"cniVersion\":\"1.0.0\",\"code\":50,")
          .contains("kipam-node at " + socket + " did not answer within 1 s");
    }
  }

  @Test
  void statusOfAnUnreachableDaemonIsNotAvailable() {
    Path socket = dir.resolve("absent.sock");

    assertThat(run(Map.of("CNI_COMMAND", "STATUS"), config(socket))).isEqualTo(1);
    assertThat(out())
        .startsWith("{\"cniVersion\":\"1.0.0\",\"code\":50,")
        .contains("kipam-node at " + socket + " is not available");
  }

  @Test
  void aMalformedTimeoutIsAnInvalidEnvironment() {
    Path socket = dir.resolve("absent.sock");

    int exit = run(Map.of("CNI_COMMAND", "ADD", "KIPAM_TIMEOUT_SECONDS", "soon"), config(socket));

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .startsWith("{\"cniVersion\":\"1.0.0\",\"code\":4,")
        .contains("KIPAM_TIMEOUT_SECONDS must be a whole number of seconds of at least 1");
  }
}
