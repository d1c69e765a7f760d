package io.kipam.system.bench;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.system.harness.CniCall;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One of the systems the comparison benchmark runs: allocate for a pod's attachment, free it. A CNI
 * IPAM plugin is called as a runtime calls it; the floor writes straight to kube-apiserver.
 */
public interface ComparedIpam {

  public String name();

  /** Allocates for {@code pod}'s attachment {@code id}. */
  public Attempt add(Pod pod, String id);

  /** Frees what {@link #add} allocated for the attachment; failures are not measured. */
  public void del(Pod pod, String id);

  /** An ADD's outcome: {@code failure} is null on success, else its kind ("code 100"). */
  public record Attempt(String failure, boolean retryable, String detail) {
    public static final Attempt OK = new Attempt(null, false, "");

    public boolean ok() {
      return failure == null;
    }
  }

  /** An IPAM plugin: its executable and network configuration for a pod. */
  public record Cni(String name, Function<Pod, Path> executable, Function<Pod, String> config)
      implements ComparedIpam {

    private static final Pattern CODE = Pattern.compile("\"code\":\\s*(\\d+)");

    @Override
    public Attempt add(Pod pod, String id) {
      CniCall.Outcome outcome =
          CniCall.run(executable.apply(pod), env("ADD", pod, id), config.apply(pod));
      if (outcome.exit() == 0) {
        return Attempt.OK;
      }
      Matcher m = CODE.matcher(outcome.stdout());
      String code = m.find() ? m.group(1) : null;
      return new Attempt(
          code == null ? "exit " + outcome.exit() : "code " + code,
          "100".equals(code) || "11".equals(code),
          outcome.stdout().replaceAll("[^\\x20-\\x7e]", "?"));
    }

    @Override
    public void del(Pod pod, String id) {
      CniCall.run(executable.apply(pod), env("DEL", pod, id), config.apply(pod));
    }

    private static Map<String, String> env(String command, Pod pod, String id) {
      Map<String, String> env = CniCall.env(command, id, pod);
      env.put("NODENAME", pod.getSpec().getNodeName()); // whereabouts' node, for node slices
      return env;
    }
  }

  /**
   * The floor: per allocation, one IPAddress per address family — the object kipam writes — created
   * straight against kube-apiserver, with nothing else around it.
   */
  public final class Floor implements ComparedIpam {
    private final KubernetesClient client;
    private final List<String> families;
    private final AtomicInteger next = new AtomicInteger();

    /** {@code families}: "4", "6" or both; one object for each per allocation. */
    public Floor(KubernetesClient client, List<String> families) {
      this.client = client;
      this.families = List.copyOf(families);
    }

    @Override
    public String name() {
      return "floor";
    }

    @Override
    public Attempt add(Pod pod, String id) {
      int n = next.incrementAndGet();
      for (String family : families) {
        try {
          client.resource(address(pod, id, family, n)).create();
        } catch (KubernetesClientException e) {
          return new Attempt("HTTP " + e.getCode(), false, String.valueOf(e.getMessage()));
        }
      }
      return Attempt.OK;
    }

    @Override
    public void del(Pod pod, String id) {
      for (String family : families) {
        client
            .resources(IPAddress.class)
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(name(id, family))
            .delete();
      }
    }

    private static String name(String id, String family) {
      return "floor." + id + ".v" + family;
    }

    private static IPAddress address(Pod pod, String id, String family, int n) {
      IPAddress address = new IPAddress();
      address.setMetadata(
          new ObjectMetaBuilder()
              .withName(name(id, family))
              .withNamespace(pod.getMetadata().getNamespace())
              .withLabels(Map.of("floor", "true"))
              .build());
      IPAddressSpec spec = new IPAddressSpec();
      spec.setIp(
          family.equals("4")
              ? "10.218." + (n / 250 % 250) + "." + (n % 250 + 1)
              : "fd00:218::" + Integer.toHexString(n));
      spec.setPool("floor-v" + family);
      spec.setNetwork("floor");
      spec.setBlock("floor-v" + family + ".0");
      spec.setNode(pod.getSpec().getNodeName());
      spec.setPod(new PodReference(pod.getMetadata().getName(), pod.getMetadata().getUid()));
      spec.setContainerID(id);
      spec.setInterfaceName("eth0");
      address.setSpec(spec);
      return address;
    }
  }
}
