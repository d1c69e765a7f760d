package io.kipam.operator.cli;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.operator.audit.OrphanRules;
import io.kipam.operator.check.CheckCommand;
import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code kubectl kipam who-has IP}: every IPAddress whose {@code spec.ip} is IP, in every
 * namespace, with its pool, its holder (the ownerReference), its pod and whether that pod exists,
 * its node, since when, and the block or sub-claim that covers it. An IPAddress's name is derived
 * from its pool and its IP, so one LIST per pool with the field selector {@code metadata.name}
 * finds them all without reading every address. Exit 0 held, 1 not held, 2 bad input or no answer.
 */
final class WhoHasCommand {

  static final String USAGE =
      """
      usage: kubectl kipam who-has IP [--kubeconfig PATH] [--help]

      Lists every IPAddress (all namespaces) holding IP, any spelling of an IPv4 or IPv6 address:
      its pool, holder (ownerReference), pod, node, since when, and the block covering it.

      exit code: 0 held, 1 held by no IPAddress, 2 a bad argument or the API could not be read
      """;

  private WhoHasCommand() {}

  static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    CliOptions options;
    IpAddress ip;
    try {
      options = CliOptions.parse("who-has", Set.of(), List.of("IP"), args, env);
      if (options.help()) {
        out.print(USAGE);
        return CheckCommand.CLEAN;
      }
      ip = parse(options.arguments().get(0));
    } catch (IllegalArgumentException e) {
      err.println("kubectl kipam who-has: " + e.getMessage());
      return CheckCommand.FAILED;
    }
    try (KubernetesClient client = Cluster.connect(options.kubeconfig())) {
      try {
        List<IPAddress> holders = holders(client, ip);
        out.print(text(client, ip, holders, Clock.systemUTC().instant()));
        out.flush();
        return holders.isEmpty() ? CheckCommand.PROBLEMS : CheckCommand.CLEAN;
      } catch (KubernetesClientException e) {
        err.println(
            "kubectl kipam who-has: "
                + CheckCommand.failure(e, "the API server " + client.getMasterUrl()));
        return CheckCommand.FAILED;
      }
    } catch (Cluster.Unreadable e) {
      err.println("kubectl kipam who-has: " + e.getMessage());
      return CheckCommand.FAILED;
    }
  }

  /** Any spelling of an address, as its canonical form; a message naming the input otherwise. */
  static IpAddress parse(String text) {
    try {
      return IpAddress.parseLenient(text.trim());
    } catch (IllegalArgumentException e) {
      // The parser's message names the text too: keep only why.
      String why = String.valueOf(e.getMessage());
      String quoted = "'" + text.trim() + "' ";
      if (why.startsWith(quoted)) {
        why = why.substring(quoted.length());
      }
      if (why.startsWith("is not an IP address ")) {
        why = why.substring("is not an IP address ".length());
      }
      if (why.startsWith("(") && why.endsWith(")")) {
        why = why.substring(1, why.length() - 1);
      }
      throw new IllegalArgumentException("'" + text + "' is not an IP address (" + why + ")");
    }
  }

  static List<IPAddress> holders(KubernetesClient client, IpAddress ip) {
    List<IPAddress> found = new ArrayList<>();
    String canonical = ip.toString();
    for (IPPool pool : client.resources(IPPool.class).list().getItems()) {
      String name = ResourceNames.addressName(pool.getMetadata().getName(), ip);
      for (IPAddress address :
          client
              .resources(IPAddress.class)
              .inAnyNamespace()
              .withField("metadata.name", name)
              .list()
              .getItems()) {
        if (address.getSpec() != null && canonical.equals(address.getSpec().getIp())) {
          found.add(address);
        }
      }
    }
    found.sort(
        Comparator.comparing((IPAddress a) -> a.getMetadata().getNamespace())
            .thenComparing(a -> a.getMetadata().getName()));
    return found;
  }

  static String text(KubernetesClient client, IpAddress ip, List<IPAddress> holders, Instant now) {
    StringBuilder out = new StringBuilder();
    if (holders.isEmpty()) {
      return ip + " is held by no IPAddress\n";
    }
    out.append(ip)
        .append(" is held by ")
        .append(holders.size())
        .append(holders.size() == 1 ? " IPAddress" : " IPAddresses")
        .append(holders.size() > 1 ? " (more than one: see `kubectl kipam check`)" : "")
        .append('\n');
    for (IPAddress address : holders) {
      String namespace = address.getMetadata().getNamespace();
      out.append('\n').append(namespace).append('/').append(address.getMetadata().getName());
      if (address.getMetadata().getDeletionTimestamp() != null) {
        out.append("  (being deleted since ")
            .append(address.getMetadata().getDeletionTimestamp())
            .append(", finalizers ")
            .append(address.getMetadata().getFinalizers())
            .append(')');
      }
      out.append('\n');
      line(out, "pool", address.getSpec().getPool());
      line(out, "holder", holder(address));
      line(out, "pod", pod(client, namespace, OrphanRules.podOf(address)));
      line(out, "node", orDash(address.getSpec().getNode()));
      line(out, "since", since(address.getMetadata().getCreationTimestamp(), now));
      line(out, "block", block(client, address.getSpec().getBlock()));
    }
    return out.toString();
  }

  private static void line(StringBuilder out, String key, String value) {
    out.append("  ").append(String.format("%-7s", key)).append(value).append('\n');
  }

  private static String holder(IPAddress address) {
    List<OwnerReference> owners = address.getMetadata().getOwnerReferences();
    if (owners == null || owners.isEmpty()) {
      return "none (no ownerReference)";
    }
    OwnerReference owner =
        owners.stream()
            .filter(o -> Boolean.TRUE.equals(o.getController()))
            .findFirst()
            .orElse(owners.get(0));
    return owner.getKind() + " " + owner.getName() + " (uid " + owner.getUid() + ")";
  }

  private static String pod(KubernetesClient client, String namespace, PodReference pod) {
    if (pod == null || pod.getName() == null) {
      return "-";
    }
    String named = namespace + "/" + pod.getName() + " (uid " + pod.getUid() + ")";
    Pod live = client.pods().inNamespace(namespace).withName(pod.getName()).get();
    if (live == null) {
      return named + ", no such Pod";
    }
    if (pod.getUid() != null && !pod.getUid().equals(live.getMetadata().getUid())) {
      return named + ", gone: a Pod of that name has uid " + live.getMetadata().getUid();
    }
    String phase = live.getStatus() == null ? null : live.getStatus().getPhase();
    return named + ", exists" + (phase == null ? "" : " (" + phase + ")");
  }

  private static String block(KubernetesClient client, String name) {
    if (name == null || name.isEmpty()) {
      return "-";
    }
    IPBlock block = client.resources(IPBlock.class).withName(name).get();
    if (block == null) {
      return name + " (no such IPBlock)";
    }
    String node = block.getSpec().getNode();
    String where = node == null || node.isEmpty() ? "no node" : "node " + node;
    if (block.getSpec().getParent() != null) {
      return "sub-claim " + name + " of slot " + block.getSpec().getParent() + " (" + where + ")";
    }
    return name + " (" + block.getSpec().getCidr() + ", " + where + ")";
  }

  static String since(String timestamp, Instant now) {
    if (timestamp == null) {
      return "-";
    }
    try {
      return timestamp + " (" + age(Duration.between(Instant.parse(timestamp), now)) + " ago)";
    } catch (DateTimeParseException e) {
      return timestamp;
    }
  }

  /** kubectl's way: 45s, 5m12s, 3h4m, 2d5h. */
  static String age(Duration age) {
    long s = Math.max(0, age.getSeconds());
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return s / 60 + "m" + s % 60 + "s";
    }
    if (s < 86400) {
      return s / 3600 + "h" + s % 3600 / 60 + "m";
    }
    return s / 86400 + "d" + s % 86400 / 3600 + "h";
  }

  private static String orDash(String value) {
    return value == null || value.isEmpty() ? "-" : value;
  }
}
