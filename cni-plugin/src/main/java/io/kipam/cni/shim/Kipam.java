package io.kipam.cni.shim;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code kipam}, the CNI IPAM executable a container runtime calls. It uses java.base only and
 * keeps no state: VERSION is answered here, every other command is forwarded with its CNI_*
 * variables and configuration to {@code kipam-node} over the node's unix socket, and the daemon's
 * answer is written to stdout with its exit code. When the daemon cannot be reached the runtime
 * gets CNI error 11 ("try again later") naming the socket, so it retries instead of giving up.
 *
 * <p>The whole exchange with the daemon (connect, send, read) must end within a deadline, 60 s
 * unless the environment variable {@code KIPAM_TIMEOUT_SECONDS} sets another whole number of
 * seconds; a daemon that does not answer in time is error 11 too (STATUS: 50), since the runtime
 * would otherwise wait on it forever. Whatever the input, the executable answers on stdout: an
 * unexpected failure is error 999.
 */
public final class Kipam {

  /**
   * The socket used when the configuration names none (or cannot be read): /run/kipam/kipam.sock,
   * or what the installer set with {@code -Dkipam.socket}. Its directory is the only one a
   * configuration may name another socket in.
   */
  static final Path DEFAULT_SOCKET =
      Path.of(System.getProperty("kipam.socket", "/run/kipam/kipam.sock"));

  static final List<String> SUPPORTED_VERSIONS =
      List.of("0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  static final String NEWEST_VERSION = "1.1.0";

  /** Configurations are small; the daemon refuses anything above 1 MiB with a clear error. */
  static final int STDIN_LIMIT = 1 << 20;

  static final String TIMEOUT_VARIABLE = "KIPAM_TIMEOUT_SECONDS";
  static final long DEFAULT_TIMEOUT_SECONDS = 60;

  static final String EXIT_CODE_HEADER = "kipam-exit-code";
  static final int INVALID_ENVIRONMENT = 4;
  static final int IO_FAILURE = 5;
  static final int INVALID_NETWORK_CONFIG = 7;
  static final int TRY_AGAIN_LATER = 11;
  static final int PLUGIN_NOT_AVAILABLE = 50;
  static final int INTERNAL = 999;

  private Kipam() {}

  public static void main(String[] args) {
    int exit = run(System.getenv(), System.in, System.out);
    System.out.flush();
    System.exit(exit);
  }

  /** One CNI call: the runtime's environment, stdin and stdout; returns the exit code. */
  static int run(Map<String, String> env, InputStream stdin, PrintStream stdout) {
    return run(env, stdin, stdout, DEFAULT_SOCKET);
  }

  /**
   * One CNI call, with {@code defaultSocket} for configurations that name no socket; a socket a
   * configuration names must be in the same directory. Whatever happens, stdout gets a CNI answer:
   * an unexpected failure is error 999 rather than silence, which a runtime could not tell from a
   * crash.
   */
  static int run(
      Map<String, String> env, InputStream stdin, PrintStream stdout, Path defaultSocket) {
    String cniVersion = NEWEST_VERSION;
    try {
      byte[] config;
      try {
        // One byte past the limit is read so the daemon can tell an oversize configuration apart.
        config = stdin.readNBytes(STDIN_LIMIT + 1);
      } catch (IOException e) {
        return error(
            stdout,
            cniVersion,
            IO_FAILURE,
            "cannot read the network configuration",
            e.getMessage());
      }
      Map<String, Object> json = MiniJson.parseObject(new String(config, StandardCharsets.UTF_8));
      if (json.get("cniVersion") instanceof String v && SUPPORTED_VERSIONS.contains(v)) {
        cniVersion = v;
      }
      if ("VERSION".equals(env.get("CNI_COMMAND"))) {
        stdout.print(versionAnswer(cniVersion));
        return 0;
      }
      long timeoutSeconds;
      try {
        timeoutSeconds = timeoutSeconds(env);
      } catch (IllegalArgumentException e) {
        return error(
            stdout,
            cniVersion,
            INVALID_ENVIRONMENT,
            e.getMessage(),
            "unset it for the default of " + DEFAULT_TIMEOUT_SECONDS + " s");
      }
      Path socket;
      try {
        socket = SocketPath.resolve(json, defaultSocket);
      } catch (SocketDirectory.Outside e) {
        return error(stdout, cniVersion, INVALID_NETWORK_CONFIG, e.getMessage(), e.details());
      } catch (IllegalArgumentException e) {
        return error(stdout, cniVersion, INVALID_NETWORK_CONFIG, e.getMessage(), SocketPath.RULE);
      }
      return forward(env, config, cniVersion, socket, timeoutSeconds, stdout);
    } catch (Throwable t) { // the last resort, StackOverflowError and OutOfMemoryError included
      return error(
          stdout,
          cniVersion,
          INTERNAL,
          "kipam failed unexpectedly: " + t,
          "a bug in the kipam executable; the call may be retried");
    }
  }

  /** The deadline of the exchange with the daemon, from {@code KIPAM_TIMEOUT_SECONDS}. */
  static long timeoutSeconds(Map<String, String> env) {
    String text = env.get(TIMEOUT_VARIABLE);
    if (text == null) {
      return DEFAULT_TIMEOUT_SECONDS;
    }
    try {
      long seconds = Long.parseLong(text);
      if (seconds >= 1) {
        return seconds;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        TIMEOUT_VARIABLE
            + " must be a whole number of seconds of at least 1, not "
            + MiniJson.quote(text));
  }

  private static int forward(
      Map<String, String> env,
      byte[] config,
      String cniVersion,
      Path socket,
      long timeoutSeconds,
      PrintStream stdout) {
    boolean status = "STATUS".equals(env.get("CNI_COMMAND"));
    try {
      UnixHttpClient.Response answer =
          UnixHttpClient.post(
              socket, "/v1/cni", envelope(env, config), Duration.ofSeconds(timeoutSeconds));
      if (answer.status() != 200 || !answer.headers().containsKey(EXIT_CODE_HEADER)) {
        return error(
            stdout,
            cniVersion,
            TRY_AGAIN_LATER,
            "kipam-node at " + socket + " answered HTTP " + answer.status(),
            new String(answer.body(), StandardCharsets.UTF_8));
      }
      stdout.write(answer.body());
      return Integer.parseInt(answer.headers().get(EXIT_CODE_HEADER));
    } catch (SocketTimeoutException e) {
      // The daemon may still finish the call; ADD and DEL are idempotent, so a retry is safe.
      return error(
          stdout,
          cniVersion,
          status ? PLUGIN_NOT_AVAILABLE : TRY_AGAIN_LATER,
          "kipam-node at " + socket + " did not answer within " + timeoutSeconds + " s",
          "check that the kipam-node pod on this node is running and ready, and its log");
    } catch (IOException | RuntimeException e) {
      if (status) {
        return error(
            stdout,
            cniVersion,
            PLUGIN_NOT_AVAILABLE,
            "kipam-node at " + socket + " is not available",
            e.getMessage());
      }
      return error(
          stdout,
          cniVersion,
          TRY_AGAIN_LATER,
          "cannot reach kipam-node at " + socket,
          e.getMessage() + "; check that the kipam-node pod on this node is running and ready");
    }
  }

  /** The request body: the CNI_* variables only (nothing else of the environment) and stdin. */
  public static byte[] envelope(Map<String, String> env, byte[] config) {
    StringBuilder json = new StringBuilder("{\"env\":{");
    String separator = "";
    for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
      if (e.getKey().startsWith("CNI_")) {
        json.append(separator)
            .append(MiniJson.quote(e.getKey()))
            .append(':')
            .append(MiniJson.quote(e.getValue()));
        separator = ",";
      }
    }
    json.append("},\"stdin\":\"").append(Base64.getEncoder().encodeToString(config)).append("\"}");
    return json.toString().getBytes(StandardCharsets.UTF_8);
  }

  static String versionAnswer(String cniVersion) {
    StringBuilder versions = new StringBuilder();
    for (String v : SUPPORTED_VERSIONS) {
      versions.append(versions.length() == 0 ? "" : ",").append(MiniJson.quote(v));
    }
    return "{\"cniVersion\":"
        + MiniJson.quote(cniVersion)
        + ",\"supportedVersions\":["
        + versions
        + "]}";
  }

  private static int error(
      PrintStream stdout, String cniVersion, int code, String msg, String details) {
    stdout.print(
        "{\"cniVersion\":"
            + MiniJson.quote(cniVersion)
            + ",\"code\":"
            + code
            + ",\"msg\":"
            + MiniJson.quote(msg)
            + ",\"details\":"
            + MiniJson.quote(details == null ? "" : details)
            + "}");
    return 1;
  }
}
