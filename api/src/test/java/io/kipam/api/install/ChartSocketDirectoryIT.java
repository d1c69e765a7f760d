package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The chart refuses, at render, a socket ({@code cni.socket}) whose directory is a system
 * directory: kipam-node mounts the socket's directory from the host, and the executable connects to
 * any socket in it, so a system directory would hand the daemon every socket and file in it. The
 * list is the one charts/kipam/values.yaml writes down at {@code cni}.
 */
class ChartSocketDirectoryIT {

  /** Never mounted whole: the socket may not sit directly in one of these. */
  static List<String> systemDirectories() {
    return List.of(
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/media",
        "/mnt",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/tmp",
        "/usr",
        "/usr/bin",
        "/usr/lib",
        "/usr/libexec",
        "/usr/local",
        "/usr/local/bin",
        "/usr/sbin",
        "/var",
        "/var/lib",
        "/var/log",
        "/var/run",
        "/var/tmp",
        "/etc/cni",
        "/etc/cni/net.d",
        "/etc/kubernetes",
        "/opt/cni",
        "/opt/cni/bin",
        "/usr/libexec/cni",
        "/var/lib/cni",
        "/var/lib/containerd",
        "/var/lib/docker",
        "/var/lib/kubelet",
        "/var/lib/kubelet/plugins",
        "/var/lib/kubelet/plugins_registry",
        "/var/lib/kubelet/pod-resources",
        "/run/containerd",
        "/var/run/containerd",
        "/run/crio",
        "/var/run/crio",
        "/run/docker",
        "/var/run/docker",
        "/run/dbus",
        "/var/run/dbus",
        "/run/systemd",
        "/var/run/systemd",
        "/run/user",
        "/var/run/user",
        "/run/netns",
        "/var/run/netns",
        "/run/k3s",
        "/var/run/k3s");
  }

  @ParameterizedTest
  @MethodSource("systemDirectories")
  void aSocketInASystemDirectoryIsRefused(String directory) {
    String socket = (directory.equals("/") ? "" : directory) + "/kipam.sock";

    assertThat(ChartRender.refusal("cni: {socket: " + socket + "}"))
        .contains(
            "cni.socket="
                + socket
                + ": the socket's directory "
                + directory
                + " is a system directory, which is never mounted whole")
        .contains(
            "put the socket in a directory of kipam's own, e.g. cni.socket=/run/kipam/kipam.sock");
  }

  @ParameterizedTest
  @ValueSource(strings = {"/proc", "/sys", "/dev", "/boot", "/var/lib/kubelet/pods"})
  void aSocketAnywhereInAPseudoOrPodFilesystemIsRefused(String tree) {
    String socket = tree + "/kipam/kipam.sock";

    assertThat(ChartRender.refusal("cni: {socket: " + socket + "}"))
        .contains(
            "cni.socket=" + socket + ": the socket's directory " + tree + "/kipam lies in " + tree)
        .contains("put the socket in a directory of kipam's own");
  }

  @ParameterizedTest
  @ValueSource(strings = {"/run/kipam/../kipam.sock", "/var/run//kipam.sock", "/run/./kipam.sock"})
  void aSystemDirectoryIsRecognisedWrittenAnyWay(String socket) {
    assertThat(ChartRender.refusal("cni: {socket: \"" + socket + "\"}"))
        .contains("cni.socket=" + socket + ": the socket's directory /")
        .contains("is a system directory");
  }

  @ParameterizedTest
  @ValueSource(strings = {"kipam.sock", "run/kipam/kipam.sock"})
  void aRelativeSocketIsRefused(String socket) {
    assertThat(ChartRender.refusal("cni: {socket: " + socket + "}"))
        .contains("cni.socket=" + socket + ": the socket's path must be absolute");
  }

  @ParameterizedTest
  @ValueSource(strings = {"/usr/libexec/kubernetes/cni", "/home/kubernetes/bin"})
  void theCniExecutablesDirectoryIsRefused(String binDir) {
    String socket = binDir + "/kipam.sock";

    assertThat(ChartRender.refusal("cni: {binDir: " + binDir + ", socket: " + socket + "}"))
        .contains("cni.socket=" + socket + ": the socket's directory " + binDir + " is cni.binDir");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "/run/kipam/kipam.sock",
        "/var/run/kipam-net/kipam.sock",
        "/run/containerd-kipam/kipam.sock",
        "/var/lib/kubelet/plugins/ipam.kipam.io/kipam.sock"
      })
  void aDirectoryOfKipamsOwnIsMounted(String socket) {
    Map<String, Map<?, ?>> objects = ChartRender.render("cni: {socket: " + socket + "}");

    String directory = socket.substring(0, socket.lastIndexOf('/'));
    assertThat(
            ChartRender.YAML
                .valueToTree(objects.get("DaemonSet/kipam-system/kipam-node"))
                .toString())
        .contains("\"path\":\"" + directory + "\"", "\"mountPath\":\"" + directory + "\"");
  }
}
