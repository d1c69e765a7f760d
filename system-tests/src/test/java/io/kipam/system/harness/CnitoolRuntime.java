package io.kipam.system.harness;

import io.fabric8.kubernetes.api.model.Pod;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a container runtime does for a node, done with the CNI reference tools: {@code cnitool}
 * (libcni) runs the reference {@code bridge} plugin, which delegates IPAM to the installed {@code
 * kipam} executable. The bridge lives in a "host" network namespace of this object's own and each
 * pod gets a namespace of its own, so the machine's network is untouched and no traffic is sent.
 * Needs root and iproute2; {@link #close} deletes every namespace it created.
 */
public final class CnitoolRuntime implements AutoCloseable {

  /** The name of the network in the conflist, as CNI_ARGS and results name it. */
  public final String network;

  private final Path tools;
  private final Path kipam;
  private final Path netconf;
  private final String hostNs;
  private final List<String> namespaces = new ArrayList<>();

  /**
   * A runtime whose one network is a bridge {@code bridgeName} with kipam as IPAM for {@code
   * pools}, through {@code socket}; {@code kipam} is the installed executable.
   */
  public CnitoolRuntime(
      Path dir, String network, String bridgeName, Path kipam, Path socket, String pool)
      throws IOException {
    this(dir, network, bridgeName, kipam, socket, pool, "");
  }

  /**
   * As above, with {@code pluginExtra} added to the bridge plugin's object (e.g. {@code
   * "capabilities":{"ips":true},"allowPersistentIPs":true}): a Multus delegate's configuration.
   */
  public CnitoolRuntime(
      Path dir,
      String network,
      String bridgeName,
      Path kipam,
      Path socket,
      String pool,
      String pluginExtra)
      throws IOException {
    this.network = network;
    this.tools = tools();
    this.kipam = kipam;
    this.netconf = Files.createDirectories(dir.resolve("net.d"));
    Files.writeString(
        netconf.resolve("10-kipam.conflist"),
        "{\"cniVersion\":\"1.1.0\",\"name\":\""
            + network
            + "\",\"plugins\":[{\"type\":\"bridge\",\"bridge\":\""
            + bridgeName
            + "\","
            + (pluginExtra.isEmpty() ? "" : pluginExtra + ",")
            + "\"ipam\":{\"type\":\"kipam\",\"pools\":[\""
            + pool
            + "\"],\"socket\":\""
            + socket
            + "\"}}]}");
    this.hostNs = netns("host");
  }

  /**
   * Builds the reference tools once (hack/cni-tools/build.sh caches them) and returns their dir.
   */
  public static Path tools() {
    Exec.Result built =
        Exec.run(
                List.of(
                    "bash",
                    ControlPlaneBinaries.repositoryRoot()
                        .resolve("hack/cni-tools/build.sh")
                        .toString()),
                Map.of(),
                "")
            .orFail();
    return Path.of(built.stdout().trim().lines().reduce((a, b) -> b).orElseThrow());
  }

  /** A new network namespace, deleted by {@link #close}; returns its name. */
  public String netns(String role) {
    String name = Fixtures.uniqueName("kipam-" + role);
    Exec.run("ip", "netns", "add", name).orFail();
    namespaces.add(name);
    return name;
  }

  public static String netnsPath(String name) {
    return "/var/run/netns/" + name;
  }

  /** The runtime's sandbox for {@code pod}: a namespace of its own with the pod's interface. */
  public Exec.Result add(String podNetns, Pod pod) {
    return cnitool("add", netnsPath(podNetns), pod, null);
  }

  /**
   * As {@link #add}, with {@code capabilityArgs} (JSON) passed as cnitool's {@code CAP_ARGS}: the
   * runtime configuration libcni gives the plugins that declare those capabilities, as Multus does
   * with a network-selection element's {@code "ips"} and {@code "mac"}.
   */
  public Exec.Result add(String podNetns, Pod pod, String capabilityArgs) {
    return cnitool("add", netnsPath(podNetns), pod, capabilityArgs);
  }

  public Exec.Result del(String podNetns, Pod pod) {
    return cnitool("del", netnsPath(podNetns), pod, null);
  }

  /** CNI STATUS, as a runtime asks before it creates sandboxes. */
  public Exec.Result status() {
    return cnitool("status", netnsPath(hostNs), null, null);
  }

  /** The pod's addresses as {@code ip} shows them inside its namespace. */
  public static String addressesInside(String podNetns) {
    return Exec.run("ip", "-n", podNetns, "-o", "addr", "show", "dev", "eth0").orFail().stdout();
  }

  /** cnitool, run inside the host namespace, as a runtime would run its CNI library. */
  private Exec.Result cnitool(String verb, String podNetns, Pod pod, String capabilityArgs) {
    String args =
        pod == null
            ? ""
            : "IgnoreUnknown=1;K8S_POD_NAMESPACE="
                + pod.getMetadata().getNamespace()
                + ";K8S_POD_NAME="
                + pod.getMetadata().getName()
                + ";K8S_POD_UID="
                + pod.getMetadata().getUid();
    return Exec.run(
        List.of(
            "ip",
            "netns",
            "exec",
            hostNs,
            tools.resolve("cnitool").toString(),
            verb,
            network,
            podNetns),
        capabilityArgs == null
            ? Map.of(
                "CNI_PATH",
                kipam.getParent() + ":" + tools,
                "NETCONFPATH",
                netconf.toString(),
                "CNI_ARGS",
                args)
            : Map.of(
                "CNI_PATH",
                kipam.getParent() + ":" + tools,
                "NETCONFPATH",
                netconf.toString(),
                "CNI_ARGS",
                args,
                "CAP_ARGS",
                capabilityArgs),
        "");
  }

  @Override
  public void close() {
    for (String ns : namespaces) {
      Exec.run("ip", "netns", "del", ns);
    }
    namespaces.clear();
  }
}
