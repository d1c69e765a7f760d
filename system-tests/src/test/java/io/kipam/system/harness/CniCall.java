package io.kipam.system.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the installed {@code kipam} executable the way a container runtime does. */
public final class CniCall {

  /** What the executable printed and how it exited. */
  public record Outcome(int exit, String stdout) {
    public boolean ok() {
      return exit == 0;
    }

    /** Every address of a successful ADD's result, without prefix lengths, in order. */
    public java.util.List<String> ips() {
      org.assertj.core.api.Assertions.assertThat(ok()).as(stdout).isTrue();
      java.util.List<String> ips = new java.util.ArrayList<>();
      try {
        new com.fasterxml.jackson.databind.ObjectMapper()
            .readTree(stdout)
            .path("ips")
            .forEach(ip -> ips.add(ip.path("address").asText().split("/")[0]));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return ips;
    }

    /** The first address of a successful ADD's result, without its prefix length. */
    public String ip() {
      org.assertj.core.api.Assertions.assertThat(ok()).as(stdout).isTrue();
      try {
        return new com.fasterxml.jackson.databind.ObjectMapper()
            .readTree(stdout)
            .path("ips")
            .get(0)
            .path("address")
            .asText()
            .split("/")[0];
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  private CniCall() {}

  /**
   * Calls {@code call} again while it answers "try again" (code 11), as a runtime does, for up to
   * {@code within}; the last answer. After a pool's last address is taken, ADDs answer "try again"
   * until kipam-operator has counted it ({@code status.available} 0), and "exhausted" from then on.
   */
  public static Outcome whileTryAgain(
      java.util.function.Supplier<Outcome> call, java.time.Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    Outcome outcome = call.get();
    while (outcome.stdout().contains("\"code\":11,") && System.nanoTime() < deadline) {
      java.util.concurrent.locks.LockSupport.parkNanos(300_000_000L);
      outcome = call.get();
    }
    return outcome;
  }

  public static Outcome run(Path executable, Map<String, String> env, String stdin) {
    ProcessBuilder builder = new ProcessBuilder(executable.toString());
    Map<String, String> processEnv = builder.environment();
    // A runtime passes the CNI variables and little else.
    processEnv.keySet().removeIf(k -> k.startsWith("CNI_"));
    processEnv.putAll(env);
    try {
      Process process = builder.redirectError(ProcessBuilder.Redirect.DISCARD).start();
      process.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
      process.getOutputStream().close();
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("kipam did not finish within 60s");
      }
      return new Outcome(process.exitValue(), out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * The CNI variables of {@code command} for {@code pod}'s eth0 in container {@code containerId}.
   */
  public static Map<String, String> env(
      String command, String containerId, io.fabric8.kubernetes.api.model.Pod pod) {
    return env(command, containerId, "eth0", pod);
  }

  /**
   * As {@link #env(String, String, String, io.fabric8.kubernetes.api.model.Pod)}, asking for the
   * address {@code ip} through {@code IP=} in CNI_ARGS unless it is null.
   */
  public static Map<String, String> env(
      String command,
      String containerId,
      String ifName,
      io.fabric8.kubernetes.api.model.Pod pod,
      String ip) {
    Map<String, String> env = env(command, containerId, ifName, pod);
    if (ip != null) {
      env.put("CNI_ARGS", env.get("CNI_ARGS") + ";IP=" + ip);
    }
    return env;
  }

  /** The variables of a call for {@code pod}'s interface {@code ifName}. */
  public static Map<String, String> env(
      String command, String containerId, String ifName, io.fabric8.kubernetes.api.model.Pod pod) {
    return env(
        command,
        containerId,
        ifName,
        pod.getMetadata().getNamespace(),
        pod.getMetadata().getName(),
        pod.getMetadata().getUid());
  }

  public static Map<String, String> env(
      String command, String containerId, String ifName, String namespace, String pod, String uid) {
    Map<String, String> env = new HashMap<>();
    env.put("CNI_COMMAND", command);
    env.put("CNI_CONTAINERID", containerId);
    env.put("CNI_NETNS", "/var/run/netns/" + containerId);
    env.put("CNI_IFNAME", ifName);
    env.put("CNI_PATH", "/opt/cni/bin");
    StringBuilder args = new StringBuilder("IgnoreUnknown=1");
    if (namespace != null) {
      args.append(";K8S_POD_NAMESPACE=").append(namespace).append(";K8S_POD_NAME=").append(pod);
    }
    if (uid != null) {
      args.append(";K8S_POD_UID=").append(uid);
    }
    env.put("CNI_ARGS", args.toString());
    return env;
  }
}
