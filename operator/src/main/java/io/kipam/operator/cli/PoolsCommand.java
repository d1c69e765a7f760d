package io.kipam.operator.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.check.CheckCommand;
import io.kipam.operator.kube.Pages;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code kubectl kipam pools}: per IPPool its CIDR, size, allocated and available addresses with a
 * bar ({@link PoolUsage} counts them as the operator does), then per node what it holds of the
 * pool. Reads the pools, the blocks (paged) and the pool's IPAddresses (paged, by the label {@code
 * kipam.io/pool}); writes nothing. Exit 0, or 2 when it could not read.
 */
final class PoolsCommand {

  static final String USAGE =
      """
      usage: kubectl kipam pools [--pool NAME]... [-o text|json] [--kubeconfig PATH] [--help]

      Usage per pool: CIDR, size (assignable addresses), allocated, available, and per node the
      blocks and sub-claims it holds, their size, what their daemons report allocated, and the
      IPAddress objects on it. Counts come from the pool's status when the operator has written it
      for the pool's current generation, else they are computed the same way.

        --pool NAME         only this pool; repeat for more (default: every pool)
        -o, --output FMT    text (default) or json

      exit code: 0 read, 2 a bad argument or the API could not be read
      """;

  static final int BAR = 20;

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private PoolsCommand() {}

  static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    CliOptions options;
    try {
      options =
          CliOptions.parse(
              "pools",
              Set.of(CliOptions.Option.POOL, CliOptions.Option.OUTPUT),
              List.of(),
              args,
              env);
    } catch (CliOptions.Invalid e) {
      err.println("kubectl kipam pools: " + e.getMessage());
      return CheckCommand.FAILED;
    }
    if (options.help()) {
      out.print(USAGE);
      return CheckCommand.CLEAN;
    }
    try (KubernetesClient client = Cluster.connect(options.kubeconfig())) {
      List<PoolUsage> usage;
      try {
        usage = read(client, options.pools());
      } catch (KubernetesClientException e) {
        err.println(
            "kubectl kipam pools: "
                + CheckCommand.failure(e, "the API server " + client.getMasterUrl()));
        return CheckCommand.FAILED;
      } catch (IllegalArgumentException e) {
        err.println("kubectl kipam pools: " + e.getMessage());
        return CheckCommand.FAILED;
      }
      out.print(options.json() ? json(usage) : text(usage));
      out.flush();
      return CheckCommand.CLEAN;
    } catch (Cluster.Unreadable e) {
      err.println("kubectl kipam pools: " + e.getMessage());
      return CheckCommand.FAILED;
    }
  }

  static List<PoolUsage> read(KubernetesClient client, Set<String> only) {
    Map<String, IPPool> pools = new TreeMap<>();
    for (IPPool pool : client.resources(IPPool.class).list().getItems()) {
      if (only.isEmpty() || only.contains(pool.getMetadata().getName())) {
        pools.put(pool.getMetadata().getName(), pool);
      }
    }
    for (String name : only) {
      if (!pools.containsKey(name)) {
        throw new IllegalArgumentException("IPPool " + name + " does not exist");
      }
    }
    List<IPBlock> blocks = new ArrayList<>();
    Pages.each(o -> client.resources(IPBlock.class).list(o), blocks::add);
    List<PoolUsage> usage = new ArrayList<>();
    for (IPPool pool : pools.values()) {
      List<IPAddress> addresses = new ArrayList<>();
      Pages.each(
          o ->
              client
                  .resources(IPAddress.class)
                  .inAnyNamespace()
                  .withLabel(ApiConstants.LABEL_POOL, pool.getMetadata().getName())
                  .list(o),
          addresses::add);
      usage.add(PoolUsage.of(pool, blocks, addresses));
    }
    return usage;
  }

  static String text(List<PoolUsage> pools) {
    if (pools.isEmpty()) {
      return "no IPPools\n";
    }
    StringBuilder out = new StringBuilder();
    for (PoolUsage pool : pools) {
      if (out.length() > 0) {
        out.append('\n');
      }
      List<List<String>> rows = new ArrayList<>();
      rows.add(List.of("POOL", "CIDR", "SIZE", "ALLOCATED", "AVAILABLE", "BLOCKS", "USAGE"));
      rows.add(
          List.of(
              pool.name(),
              pool.cidr(),
              pool.size() == null ? "invalid" : pool.size().toString(),
              Long.toString(pool.allocated()),
              pool.available() == null ? "-" : pool.available().toString(),
              Integer.toString(pool.blocks()),
              bar(pool.allocated(), pool.size())));
      table(rows, "", out);
      if (!pool.nodes().isEmpty()) {
        List<List<String>> nodes = new ArrayList<>();
        nodes.add(
            List.of("NODE", "BLOCKS", "SUB-CLAIMS", "SIZE", "ALLOCATED", "IPADDRESSES", "USAGE"));
        for (PoolUsage.NodeUsage node : pool.nodes()) {
          nodes.add(
              List.of(
                  node.node(),
                  Integer.toString(node.blocks()),
                  Integer.toString(node.subClaims()),
                  node.size().toString(),
                  Long.toString(node.allocated()),
                  Long.toString(node.addresses()),
                  bar(node.allocated(), node.size())));
        }
        table(nodes, "  ", out);
      }
      if (!pool.fromStatus()) {
        out.append("  (no current status from kipam-operator: counts computed from the blocks)\n");
      }
    }
    return out.toString();
  }

  /** {@code [#####...............] 25%}; {@code used} of {@code of}. */
  static String bar(long used, BigInteger of) {
    if (of == null || of.signum() <= 0) {
      return "[" + ".".repeat(BAR) + "]    -";
    }
    BigInteger u = BigInteger.valueOf(Math.max(0, used)).min(of);
    int filled = u.multiply(BigInteger.valueOf(BAR)).divide(of).intValue();
    if (filled == 0 && u.signum() > 0) {
      filled = 1; // something used never looks empty
    }
    int percent = u.multiply(BigInteger.valueOf(100)).divide(of).intValue();
    return "["
        + "#".repeat(filled)
        + ".".repeat(BAR - filled)
        + "] "
        + String.format("%3d%%", percent);
  }

  static String json(List<PoolUsage> pools) {
    List<Map<String, Object>> list = new ArrayList<>();
    for (PoolUsage pool : pools) {
      Map<String, Object> p = new LinkedHashMap<>();
      p.put("name", pool.name());
      p.put("cidr", pool.cidr());
      p.put("size", pool.size() == null ? null : pool.size().toString());
      p.put("allocated", pool.allocated());
      p.put("available", pool.available() == null ? null : pool.available().toString());
      p.put("blocks", pool.blocks());
      p.put("fromStatus", pool.fromStatus());
      p.put(
          "nodes",
          pool.nodes().stream()
              .map(
                  n -> {
                    Map<String, Object> o = new LinkedHashMap<>();
                    o.put("node", n.node());
                    o.put("blocks", n.blocks());
                    o.put("subClaims", n.subClaims());
                    o.put("size", n.size().toString());
                    o.put("allocated", n.allocated());
                    o.put("addresses", n.addresses());
                    return o;
                  })
              .toList());
      list.add(p);
    }
    try {
      return JSON.writeValueAsString(Map.of("pools", list)) + "\n";
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void table(List<List<String>> rows, String indent, StringBuilder out) {
    int[] widths = new int[rows.get(0).size()];
    for (List<String> row : rows) {
      for (int i = 0; i < row.size(); i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    for (List<String> row : rows) {
      StringBuilder line = new StringBuilder(indent);
      for (int i = 0; i < row.size(); i++) {
        line.append(String.format("%-" + widths[i] + "s", row.get(i)));
        if (i < row.size() - 1) {
          line.append("  ");
        }
      }
      out.append(line.toString().stripTrailing()).append('\n');
    }
  }
}
