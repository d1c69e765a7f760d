package io.kipam.cni.shim;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the kipam executable does, whichever version runs: the Java one in-process ({@link
 * KipamTest}) and the native binary as a process ({@link NativeKipamTest}) must pass every case.
 */
abstract class KipamContract {

  @TempDir Path dir;

  private String stdout = "";

  /** What one call printed and returned. */
  record Call(int exit, String stdout) {}

  /**
   * Runs one call with {@code env} as the whole environment and {@code stdin}; {@code
   * defaultSocket}, when not null, is the socket for configurations that name none.
   */
  abstract Call call(Map<String, String> env, byte[] stdin, Path defaultSocket) throws Exception;

  /**
   * Runs one call whose default socket is {@code default.sock} in {@link #dir}, so the sockets the
   * tests name in {@link #dir} are in the installer's directory.
   */
  private int run(Map<String, String> env, String stdin) throws Exception {
    return run(env, stdin.getBytes(StandardCharsets.UTF_8), dir.resolve("default.sock"));
  }

  private int run(Map<String, String> env, byte[] stdin, Path defaultSocket) throws Exception {
    Call call = call(env, stdin, defaultSocket);
    stdout = call.stdout();
    return call.exit();
  }

  private int runWithDefaultSocket(Map<String, String> env, String stdin, Path defaultSocket)
      throws Exception {
    return run(env, stdin.getBytes(StandardCharsets.UTF_8), defaultSocket);
  }

  private static String okAnswer(String result) {
    return daemonAnswer(0, result);
  }

  /** The daemon's HTTP answer with exit code {@code exit} and CNI output {@code result}. */
  private static String daemonAnswer(int exit, String result) {
    return "HTTP/1.1 200 OK\r\nKipam-Exit-Code: "
        + exit
        + "\r\nContent-Length: "
        + result.length()
        + "\r\nConnection: close\r\n\r\n"
        + result;
  }

  private String out() {
    return stdout;
  }

  private String config(Path socket) {
    return "{\"cniVersion\":\"1.0.0\",\"name\":\"net\",\"ipam\":{\"type\":\"kipam\","
        + "\"pools\":[\"pods-v4\"],\"socket\":"
        + MiniJson.quote(socket.toString())
        + "}}";
  }

  /** A socket no daemon listens on. */
  private Path absentSocket() {
    return dir.resolve("absent.sock");
  }

  /**
   * The output of a call with {@code env} and a config naming {@link #absentSocket}, which must
   * fail.
   */
  private String failsWithoutTheDaemon(Map<String, String> env) throws Exception {
    assertThat(run(env, config(absentSocket()))).isEqualTo(1);
    return out();
  }

  @Test
  void versionIsAnsweredWithoutTheDaemon() throws Exception {
    int exit = run(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"0.4.0\"}");

    assertThat(exit).isZero();
    assertThat(out())
        .isEqualTo(
            "{\"cniVersion\":\"0.4.0\",\"supportedVersions\":"
                + "[\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}");
  }

  @Test
  void versionOfAnUnknownCniVersionAnswersWithTheNewest() throws Exception {
    assertThat(run(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"9.9.9\"}")).isZero();
    assertThat(out()).startsWith("{\"cniVersion\":\"1.1.0\"");
  }

  @Test
  void unreachableDaemonIsTryAgainLaterNamingTheSocket() throws Exception {
    assertThat(failsWithoutTheDaemon(Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "c1")))
        .startsWith("{\"cniVersion\":\"1.0.0\",\"code\":11,")
        .contains("cannot reach kipam-node at " + absentSocket())
        .contains("running and ready");
  }

  @Test
  void forwardsOnlyCniVariablesAndStdinAndReturnsTheDaemonsAnswer() throws Exception {
    Path socket = dir.resolve("kipam.sock");
    String result = "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.0.0.5/24\"}]}";
    try (FakeDaemon daemon = new FakeDaemon(socket, okAnswer(result))) {
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
  void versionOfAConfigurationTooDeepToReadAnswersWithTheNewest() throws Exception {
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
  void socketPathProblemsAreInvalidConfigurationNotTryAgainLater() throws Exception {
    Path relative = Path.of("kipam.sock");
    String tooLong = dir.resolve("s".repeat(110)).toString();

    for (String socket : List.of(relative.toString(), "/run/k\u0000.sock", tooLong)) {

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
  void aSocketThatIsNotAStringIsInvalidConfiguration() throws Exception {
    int exit = run(Map.of("CNI_COMMAND", "STATUS"), "{\"ipam\":{\"socket\":[\"/a.sock\"]}}");

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .startsWith(
            "{\"cniVersion\":\"1.1.0\",\"code\":7,"
                + "\"msg\":\"ipam.socket must be a string, not a list\"");
  }

  /** Runs the call on another thread, so a call that never returns fails the test instead. */
  private int runAsync(Map<String, String> env, String stdin) throws Exception {
    CompletableFuture<Integer> exit =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return run(env, stdin);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    await().atMost(Duration.ofSeconds(60)).until(exit::isDone);
    return exit.get();
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

  /**
   * A daemon that takes the call and never answers: once the deadline passes, ADD is "try again
   * later" (11) and STATUS "not available" (50).
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"ADD, 11", "STATUS, 50"})
  void aDaemonThatNeverAnswersFailsTheCallOnceTheDeadlinePasses(String command, int code)
      throws Exception {
    Path socket = dir.resolve("kipam.sock");
    try (FakeDaemon daemon = FakeDaemon.thatNeverAnswers(socket)) {
      int exit =
          runAsync(Map.of("CNI_COMMAND", command, "KIPAM_TIMEOUT_SECONDS", "1"), config(socket));

      assertThat(exit).isEqualTo(1);
      assertThat(daemon.request).isCompleted();
      assertThat(out())
          .startsWith("{\"cniVersion\":\"1.0.0\",\"code\":" + code + ",")
          .contains("kipam-node at " + socket + " did not answer within 1 s");
    }
  }

  @Test
  void statusOfAnUnreachableDaemonIsNotAvailable() throws Exception {
    assertThat(failsWithoutTheDaemon(Map.of("CNI_COMMAND", "STATUS")))
        .startsWith("{\"cniVersion\":\"1.0.0\",\"code\":50,")
        .contains("kipam-node at " + absentSocket() + " is not available");
  }

  @Test
  void aMalformedTimeoutIsAnInvalidEnvironment() throws Exception {
    assertThat(failsWithoutTheDaemon(Map.of("CNI_COMMAND", "ADD", "KIPAM_TIMEOUT_SECONDS", "soon")))
        .startsWith("{\"cniVersion\":\"1.0.0\",\"code\":4,")
        .contains("KIPAM_TIMEOUT_SECONDS must be a whole number of seconds of at least 1");
  }

  @ParameterizedTest
  @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
  void versionAnswersInEverySupportedVersion(String version) throws Exception {
    assertThat(run(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"" + version + "\"}"))
        .isZero();
    assertThat(out())
        .isEqualTo(
            "{\"cniVersion\":\""
                + version
                + "\",\"supportedVersions\":"
                + "[\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}");
  }

  @ParameterizedTest
  @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
  void errorsAnswerInTheCallersVersion(String version) throws Exception {
    Path socket = absentSocket();
    String config =
        "{\"cniVersion\":\""
            + version
            + "\",\"ipam\":{\"socket\":"
            + MiniJson.quote(socket.toString())
            + "}}";

    assertThat(run(Map.of("CNI_COMMAND", "DEL"), config)).isEqualTo(1);
    assertThat(out()).startsWith("{\"cniVersion\":\"" + version + "\",\"code\":11,");
  }

  @ParameterizedTest
  @ValueSource(strings = {"ADD", "DEL", "CHECK", "GC", "STATUS"})
  void everyVerbButVersionIsForwardedWithTheDaemonsExitCode(String verb) throws Exception {
    Path socket = dir.resolve("kipam.sock");
    String answer = "{\"verb\":\"" + verb + "\"}";
    try (FakeDaemon daemon = new FakeDaemon(socket, daemonAnswer(3, answer))) {
      assertThat(run(Map.of("CNI_COMMAND", verb), config(socket))).isEqualTo(3);
      assertThat(out()).isEqualTo(answer);
      assertThat(daemon.request.get(5, TimeUnit.SECONDS))
          .contains("{\"env\":{\"CNI_COMMAND\":\"" + verb + "\"},\"stdin\":");
    }
  }

  @Test
  void stdinIsForwardedUpToOneByteOverTheLimitForTheDaemonToRefuse() throws Exception {
    Path socket = dir.resolve("kipam.sock");
    byte[] big = new byte[Kipam.STDIN_LIMIT * 2];
    Arrays.fill(big, (byte) 'x');
    try (FakeDaemon daemon = new FakeDaemon(socket, okAnswer("{}"))) {
      assertThat(run(Map.of("CNI_COMMAND", "ADD"), big, socket)).isZero();

      String request = daemon.request.get(5, TimeUnit.SECONDS);
      String encoded = request.substring(request.indexOf("\"stdin\":\"") + 9);
      byte[] forwarded = Base64.getDecoder().decode(encoded.substring(0, encoded.indexOf('"')));
      assertThat(forwarded).hasSize(Kipam.STDIN_LIMIT + 1);
    }
  }

  @Test
  void configurationThatIsNotJsonIsForwardedToTheDefaultSocketAndVersionIsTheNewest()
      throws Exception {
    Path socket = dir.resolve("default.sock");
    assertThat(run(Map.of("CNI_COMMAND", "VERSION"), "not json {")).isZero();
    assertThat(out()).startsWith("{\"cniVersion\":\"1.1.0\",\"supportedVersions\":");

    try (FakeDaemon daemon = new FakeDaemon(socket, okAnswer("{\"code\":6}"))) {
      assertThat(runWithDefaultSocket(Map.of("CNI_COMMAND", "ADD"), "not json {", socket)).isZero();
      assertThat(out()).isEqualTo("{\"code\":6}");
      assertThat(daemon.request.get(5, TimeUnit.SECONDS))
          .contains(Base64.getEncoder().encodeToString("not json {".getBytes(UTF_8)));
    }
  }

  @Test
  void socketPathProblemsNameTheFieldAndWhatIsWrong() throws Exception {
    String tooLong = "/" + "é".repeat(100);
    Map<String, String> expected =
        Map.of(
            "\"run/kipam.sock\"",
            "ipam.socket 'run/kipam.sock' must be an absolute path",
            "\"/run/k\\u0000.sock\"",
            "ipam.socket must not contain a NUL character",
            "5",
            "ipam.socket must be a string, not a number",
            "true",
            "ipam.socket must be a string, not a boolean",
            "{}",
            "ipam.socket must be a string, not an object",
            "[\"/a.sock\"]",
            "ipam.socket must be a string, not a list",
            MiniJson.quote(tooLong),
            "ipam.socket '/"
                + "é".repeat(79)
                + "...(101 characters)' is longer than the 107 bytes a unix socket path may"
                + " have");
    for (Map.Entry<String, String> e : expected.entrySet()) {
      String config = "{\"cniVersion\":\"0.4.0\",\"ipam\":{\"socket\":" + e.getKey() + "}}";

      assertThat(run(Map.of("CNI_COMMAND", "ADD"), config)).as(e.getKey()).isEqualTo(1);
      assertThat(out())
          .as(e.getKey())
          .isEqualTo(
              "{\"cniVersion\":\"0.4.0\",\"code\":7,\"msg\":"
                  + MiniJson.quote(e.getValue())
                  + ",\"details\":"
                  + MiniJson.quote(SocketPath.RULE)
                  + "}");
    }
  }

  @Test
  void aSocketPathOfTheLongestLengthIsTriedNotRefused() throws Exception {
    int room = SocketPath.MAX_BYTES - (dir + "/").getBytes(UTF_8).length;
    String longest = dir + "/" + "é".repeat(room / 2) + "s".repeat(room % 2);

    int exit = run(Map.of("CNI_COMMAND", "ADD"), "{\"ipam\":{\"socket\":\"" + longest + "\"}}");

    assertThat(exit).isEqualTo(1);
    assertThat(out()).contains("\"code\":11,").contains("cannot reach kipam-node at " + longest);
  }

  private static String configNaming(String socket) {
    return "{\"cniVersion\":\"1.0.0\",\"ipam\":{\"type\":\"kipam\",\"socket\":"
        + MiniJson.quote(socket)
        + "}}";
  }

  @Test
  void aSocketOutsideTheInstallersDirectoryIsRefusedWithoutAConnect() throws Exception {
    Path run = Files.createDirectories(dir.resolve("run"));
    Path outside = Files.createDirectories(dir.resolve("outside"));
    Path listened = outside.resolve("x.sock");
    Files.createDirectories(dir.resolve("runx"));
    Files.createSymbolicLink(run.resolve("escape"), outside);
    Files.createSymbolicLink(run.resolve("link.sock"), listened);
    Files.createSymbolicLink(run.resolve("dangling.sock"), outside.resolve("none.sock"));
    String notInside = " is not a path inside " + run;
    String throughALink = " leads outside " + run + " through a symbolic link";
    Map<String, String> problems = new LinkedHashMap<>();
    problems.put(listened.toString(), notInside);
    problems.put("/tmp/x.sock", notInside);
    problems.put(run + "/../outside/x.sock", notInside);
    problems.put(run + "//..//outside/./x.sock", notInside);
    problems.put(dir + "/runx/x.sock", notInside);
    problems.put(run.toString(), notInside);
    problems.put(run + "/", notInside);
    problems.put(run + "/.", notInside);
    problems.put(run + "/escape/x.sock", throughALink);
    problems.put(run + "/link.sock", throughALink);
    problems.put(run + "/dangling.sock", throughALink);
    String rule =
        "kipam connects only to a socket in "
            + run
            + ", the directory its installer configured; leave ipam.socket out for the default"
            + " socket";
    try (ServerSocketChannel recording = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      recording.bind(UnixDomainSocketAddress.of(listened));
      recording.configureBlocking(false);

      for (Map.Entry<String, String> e : problems.entrySet()) {
        int exit =
            runWithDefaultSocket(
                Map.of("CNI_COMMAND", "ADD", "KIPAM_TIMEOUT_SECONDS", "1"),
                configNaming(e.getKey()),
                run.resolve("kipam.sock"));

        assertThat(exit).as(e.getKey()).isEqualTo(1);
        assertThat(out())
            .as(e.getKey())
            .isEqualTo(
                "{\"cniVersion\":\"1.0.0\",\"code\":7,\"msg\":"
                    + MiniJson.quote("ipam.socket " + SocketPath.quote(e.getKey()) + e.getValue())
                    + ",\"details\":"
                    + MiniJson.quote(rule)
                    + "}");
      }
      // A connect completes in the listening socket's backlog, even one nobody accepts.
      assertThat(recording.accept()).as("a connection to the socket outside").isNull();
    }
  }

  @Test
  void withTheBuiltInSocketOnlyItsDirectoryMayBeNamed() throws Exception {
    int exit =
        run(
            Map.of("CNI_COMMAND", "STATUS"),
            configNaming("/tmp/x.sock").getBytes(StandardCharsets.UTF_8),
            null);

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .isEqualTo(
            "{\"cniVersion\":\"1.0.0\",\"code\":7,"
                + "\"msg\":\"ipam.socket '/tmp/x.sock' is not a path inside /run/kipam\","
                + "\"details\":\"kipam connects only to a socket in /run/kipam, the directory its"
                + " installer configured; leave ipam.socket out for the default socket\"}");
  }

  @Test
  void aSocketInTheInstallersDirectoryIsReachedByItsCleanedPath() throws Exception {
    Path run = Files.createDirectories(dir.resolve("run"));
    Path other = run.resolve("other.sock");
    Files.createSymbolicLink(run.resolve("alias.sock"), other);
    for (String named :
        List.of(
            other.toString(),
            run + "//other.sock",
            run + "/./other.sock",
            run + "/absent/../other.sock",
            run + "/alias.sock")) {
      try (FakeDaemon daemon = new FakeDaemon(other, okAnswer("{\"ok\":true}"))) {
        int exit =
            runWithDefaultSocket(
                Map.of("CNI_COMMAND", "ADD"), configNaming(named), run.resolve("kipam.sock"));

        assertThat(exit).as(named).isZero();
        assertThat(out()).as(named).isEqualTo("{\"ok\":true}");
        assertThat(daemon.request.get(5, TimeUnit.SECONDS)).startsWith("POST /v1/cni ");
      } finally {
        Files.deleteIfExists(other);
      }
    }
  }
}
