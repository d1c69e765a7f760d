package io.kipam.images.node;

import static java.nio.file.StandardCopyOption.COPY_ATTRIBUTES;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.IPPoolStatus;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.Fixtures;
import io.kipam.testing.ImageTarball;
import io.kipam.testing.KipamCrds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Makes kipam-node's AOT cache for its image: runs the image as built so far (its runtime, its
 * jars, its entrypoint's options) against a control plane of its own, with pods waiting as on a new
 * node, and lets the JVM write what that start loaded and linked ({@code -XX:AOTCacheOutput}) when
 * it ends. The image's entrypoint maps the cache ({@code -XX:AOTCache=/app/kipam-node.aot}), so a
 * node's first start skips most of its class loading (docs/images.md, docs/benchmarks.md).
 *
 * <p>The training calls kipam-node as a runtime does: the image's own {@code kipam} executable,
 * {@value #AT_ONCE} calls at once, STATUS until it is ready, ADD for {@value #PODS} pods over three
 * namespaces, then DEL for each. The cache is valid for the image's runtime and jars only, which
 * the JVM checks when it maps it; its paths may differ (here the image lies unpacked under the
 * build's directory).
 *
 * <p>Arguments: the image's tarball without the cache, the directory the cache goes to ({@code
 * kipam-node.aot}, added to the image at /app), and a work directory. A cache made from the same
 * image before is kept.
 */
public final class AotTraining {

  static final String CACHE = "kipam-node.aot";
  private static final String IMAGE_CACHE_OPTION = "-XX:AOTCache=/app/" + CACHE;
  private static final int PODS = 200;
  private static final int AT_ONCE = 8;
  private static final String NODE = "aot-training";
  private static final String POOL = "aot-training";

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: AotTraining UNTRAINED_IMAGE_TAR CACHE_DIR WORK_DIR");
      System.exit(2);
    }
    Path tarball = Path.of(args[0]);
    Path cacheDir = Files.createDirectories(Path.of(args[1]));
    Path work = Path.of(args[2]);
    Path cache = cacheDir.resolve(CACHE);
    Path keyFile = cacheDir.resolveSibling(CACHE + ".image");
    String key = sha256(tarball);
    if (Files.exists(cache) && Files.exists(keyFile) && Files.readString(keyFile).equals(key)) {
      System.out.println("kipam-node AOT cache: up to date for this image (" + cache + ")");
      return;
    }
    deleteTree(work);
    long start = System.nanoTime();
    ImageTarball image = ImageTarball.unpack(tarball, work.resolve("image"));
    Path written = work.resolve(CACHE);
    try (ControlPlane controlPlane = ControlPlane.fresh()) {
      train(image, controlPlane, written, work);
    }
    if (!Files.exists(written) || Files.size(written) == 0) {
      throw new IllegalStateException("kipam-node wrote no AOT cache; its log: " + log(work));
    }
    Files.move(written, cache, StandardCopyOption.REPLACE_EXISTING);
    Files.writeString(keyFile, key);
    System.out.printf(
        "kipam-node AOT cache: %.1f MiB from %d ADDs and DELs, made in %.0f s (%s)%n",
        Files.size(cache) / 1048576.0, PODS, (System.nanoTime() - start) / 1e9, cache);
  }

  private static void train(ImageTarball image, ControlPlane controlPlane, Path cache, Path work)
      throws Exception {
    KubernetesClient client = controlPlane.client();
    KipamCrds.install(client);
    Fixtures.registerNode(client, NODE);
    readyPool(client);
    List<String> namespaces = new ArrayList<>();
    for (int n = 0; n < 3; n++) {
      namespaces.add(Fixtures.namespace(client, "aot-training"));
    }
    List<Pod> pods = new ArrayList<>();
    for (int i = 0; i < PODS; i++) {
      pods.add(pod(client, namespaces.get(i % namespaces.size()), "pod-" + i));
    }

    Path run = Files.createTempDirectory("kipam-aot"); // a socket path must stay short
    Path socket = run.resolve("kipam.sock");
    Process daemon = start(image, controlPlane, cache, run, socket, work.resolve("kipam-node.log"));
    try {
      // kipam as CniInstaller installs it: beside it, the socket it connects to.
      Path bin = Files.createDirectories(run.resolve("bin"));
      Path kipam =
          Files.copy(image.file("/opt/kipam/kipam"), bin.resolve("kipam"), COPY_ATTRIBUTES);
      Files.writeString(bin.resolve("kipam.conf"), "socket=" + socket);
      String config =
          "{\"cniVersion\":\"1.1.0\",\"name\":\"aot-training\",\"type\":\"bridge\",\"ipam\":"
              + "{\"type\":\"kipam\",\"pools\":[\""
              + POOL
              + "\"]}}";
      awaitStatus(daemon, kipam, config, work);
      for (String command : List.of("ADD", "DEL")) {
        int failed = atOnce(pods, pod -> call(kipam, command, pod, config));
        if (failed > 0) {
          throw new IllegalStateException(
              failed + " " + command + " calls failed in training; kipam-node's log: " + log(work));
        }
      }
    } finally {
      daemon.destroy(); // SIGTERM: the JVM ends normally and writes the cache
      if (!daemon.waitFor(180, TimeUnit.SECONDS)) {
        daemon.destroyForcibly();
        throw new IllegalStateException("kipam-node did not end within 180 s of SIGTERM");
      }
      deleteTree(run);
    }
  }

  /** An IPPool as kipam-operator leaves it once checked: Ready for its generation. */
  private static void readyPool(KubernetesClient client) {
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName(POOL).build());
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr("10.240.0.0/22");
    spec.setBlockSize(26);
    spec.setReuseDelaySeconds(0);
    pool.setSpec(spec);
    IPPool created = client.resource(pool).create();
    IPPoolStatus status = new IPPoolStatus();
    status.setObservedGeneration(created.getMetadata().getGeneration());
    status.setConditions(
        new ArrayList<>(
            List.of(
                new ConditionBuilder()
                    .withType("Ready")
                    .withStatus("True")
                    .withReason("Checked")
                    .withMessage("ready for kipam-node's AOT training")
                    .withObservedGeneration(created.getMetadata().getGeneration())
                    .withLastTransitionTime(Instant.now().toString())
                    .build())));
    created.setStatus(status);
    client.resource(created).updateStatus();
  }

  private static Pod pod(KubernetesClient client, String namespace, String name) {
    return client
        .pods()
        .inNamespace(namespace)
        .resource(Fixtures.podOn(name, NODE).build())
        .create();
  }

  /**
   * The image's entrypoint with the image's paths where it lies unpacked, writing the cache instead
   * of mapping it; the image's environment and what a DaemonSet gives it.
   */
  private static Process start(
      ImageTarball image, ControlPlane controlPlane, Path cache, Path run, Path socket, Path log)
      throws IOException {
    boolean[] cacheOption = {false};
    List<String> command =
        image.unpackedCommand(
            option -> {
              if (!option.equals(IMAGE_CACHE_OPTION)) {
                return option;
              }
              cacheOption[0] = true;
              return "-XX:AOTCacheOutput=" + cache;
            },
            List.of());
    if (!cacheOption[0]) {
      throw new IllegalStateException(
          "the image's entrypoint has no " + IMAGE_CACHE_OPTION + ": " + command);
    }
    ProcessBuilder builder = new ProcessBuilder(command);
    Map<String, String> env = builder.environment();
    env.clear();
    env.putAll(image.unpackedEnvironment());
    env.put("NODE_NAME", NODE);
    env.put("KUBECONFIG", controlPlane.adminKubeconfig().toString());
    env.put("KIPAM_SOCKET", socket.toString());
    env.put("KIPAM_STATE_DIR", Files.createDirectories(run.resolve("state")).toString());
    System.out.println("kipam-node AOT training: " + String.join(" ", command));
    return builder.redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  private static void awaitStatus(Process daemon, Path kipam, String config, Path work)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    String[] answer = new String[1];
    while (cni(kipam, Map.of("CNI_COMMAND", "STATUS"), config, answer) != 0) {
      if (!daemon.isAlive() || System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "kipam-node not ready within 120 s of its start (STATUS: "
                + answer[0]
                + "); its log: "
                + log(work));
      }
      Thread.sleep(100);
    }
  }

  /** One CNI call for {@code pod}, tried again while kipam-node answers "try again later" (11). */
  private static boolean call(Path kipam, String command, Pod pod, String config) throws Exception {
    Map<String, String> env =
        Map.of(
            "CNI_COMMAND",
            command,
            "CNI_CONTAINERID",
            "aot-" + pod.getMetadata().getUid(),
            "CNI_NETNS",
            "/var/run/netns/aot-" + pod.getMetadata().getName(),
            "CNI_IFNAME",
            "eth0",
            "CNI_PATH",
            "/opt/cni/bin",
            "CNI_ARGS",
            "IgnoreUnknown=1;K8S_POD_NAMESPACE="
                + pod.getMetadata().getNamespace()
                + ";K8S_POD_NAME="
                + pod.getMetadata().getName()
                + ";K8S_POD_UID="
                + pod.getMetadata().getUid());
    String[] answer = new String[1];
    if (cni(kipam, env, config, answer) == 0) {
      return true;
    }
    System.err.println(command + " of " + pod.getMetadata().getName() + ": " + answer[0]);
    return false;
  }

  /** Runs {@code kipam} as a runtime does; its exit code, and what it printed in {@code answer}. */
  private static int cni(Path kipam, Map<String, String> env, String config, String[] answer)
      throws Exception {
    ProcessBuilder builder = new ProcessBuilder(kipam.toString()).redirectErrorStream(true);
    builder.environment().clear();
    builder.environment().putAll(env);
    Process process = builder.start();
    try (var in = process.getOutputStream()) {
      in.write(config.getBytes(StandardCharsets.UTF_8));
    }
    answer[0] = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      return -1;
    }
    return process.exitValue();
  }

  private interface PodCall {
    boolean call(Pod pod) throws Exception;
  }

  /** Calls {@code call} for every pod, {@value #AT_ONCE} at once; how many answered false. */
  private static int atOnce(List<Pod> pods, PodCall call) throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(AT_ONCE);
    try {
      List<Future<Boolean>> results = new ArrayList<>();
      for (Pod pod : pods) {
        results.add(threads.submit(() -> call.call(pod)));
      }
      int failed = 0;
      for (Future<Boolean> result : results) {
        failed += result.get() ? 0 : 1;
      }
      return failed;
    } finally {
      threads.shutdown();
    }
  }

  private static String log(Path work) throws IOException {
    Path log = work.resolve("kipam-node.log");
    if (!Files.exists(log)) {
      return "(none)";
    }
    List<String> lines = Files.readAllLines(log);
    return "\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  private static String sha256(Path file) throws Exception {
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    try (var in = Files.newInputStream(file)) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        digest.update(buffer, 0, n);
      }
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
