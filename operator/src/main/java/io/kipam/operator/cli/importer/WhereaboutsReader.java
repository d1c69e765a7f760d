package io.kipam.operator.cli.importer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.operator.cli.importer.WhereaboutsState.Allocation;
import io.kipam.operator.cli.importer.WhereaboutsState.LivePod;
import io.kipam.operator.cli.importer.WhereaboutsState.Pool;
import io.kipam.operator.cli.importer.WhereaboutsState.Reservation;
import io.kipam.operator.kube.Pages;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads what an import needs, read-only: NetworkAttachmentDefinitions of every namespace,
 * whereabouts' IPPools and OverlappingRangeIPReservations in its namespace, Pods, and kipam's
 * IPPools, IPBlocks and IPAddresses (Pods, IPBlocks and IPAddresses in pages). A whereabouts object
 * whose fields cannot be read becomes a {@link BadInput}; an API failure propagates (the command
 * cannot run).
 */
public final class WhereaboutsReader {

  static final String WB_API = "whereabouts.cni.cncf.io/v1alpha1";
  static final String NAD_API = "k8s.cni.cncf.io/v1";

  private WhereaboutsReader() {}

  public static WhereaboutsState read(KubernetesClient client, String whereaboutsNamespace) {
    List<WhereaboutsNetwork> networks = new ArrayList<>();
    List<SwitchedNetwork> switched = new ArrayList<>();
    List<BadInput> problems = new ArrayList<>();
    for (GenericKubernetesResource nad :
        client
            .genericKubernetesResources(NAD_API, "NetworkAttachmentDefinition")
            .inAnyNamespace()
            .list()
            .getItems()) {
      Object config = spec(nad).get("config");
      NadConfigParser.Parsed parsed =
          NadConfigParser.parse(
              nad.getMetadata().getNamespace(),
              nad.getMetadata().getName(),
              config instanceof String s ? s : null);
      parsed.network().ifPresent(networks::add);
      parsed.switched().ifPresent(switched::add);
      problems.addAll(parsed.problems());
    }
    List<Pool> pools = new ArrayList<>();
    for (GenericKubernetesResource pool :
        client
            .genericKubernetesResources(WB_API, "IPPool")
            .inNamespace(whereaboutsNamespace)
            .list()
            .getItems()) {
      List<Allocation> allocations = new ArrayList<>();
      Object raw = spec(pool).get("allocations");
      if (raw instanceof Map<?, ?> map) {
        for (var e : map.entrySet()) {
          Map<?, ?> a = e.getValue() instanceof Map<?, ?> m ? m : Map.of();
          allocations.add(
              new Allocation(
                  String.valueOf(e.getKey()),
                  str(a.get("id")),
                  str(a.get("podref")),
                  str(a.get("ifname"))));
        }
      }
      pools.add(
          new Pool(
              whereaboutsNamespace,
              pool.getMetadata().getName(),
              str(spec(pool).get("range")),
              allocations));
    }
    List<Reservation> reservations = new ArrayList<>();
    for (GenericKubernetesResource r :
        client
            .genericKubernetesResources(WB_API, "OverlappingRangeIPReservation")
            .inNamespace(whereaboutsNamespace)
            .list()
            .getItems()) {
      Map<String, Object> spec = spec(r);
      reservations.add(
          new Reservation(
              whereaboutsNamespace,
              r.getMetadata().getName(),
              str(spec.get("containerid")),
              str(spec.get("podref")),
              str(spec.get("ifname"))));
    }
    Map<String, LivePod> pods = new HashMap<>();
    Pages.each(
        o -> client.pods().inAnyNamespace().list(o),
        pod -> {
          String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
          pods.put(
              pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName(),
              new LivePod(
                  pod.getMetadata().getNamespace(),
                  pod.getMetadata().getName(),
                  pod.getMetadata().getUid(),
                  pod.getSpec() == null ? null : pod.getSpec().getNodeName(),
                  phase,
                  "Succeeded".equals(phase) || "Failed".equals(phase)));
        });
    Map<String, IPPool> kipamPools = new TreeMap<>();
    client
        .resources(IPPool.class)
        .list()
        .getItems()
        .forEach(p -> kipamPools.put(p.getMetadata().getName(), p));
    Map<String, IPBlock> blocks = new TreeMap<>();
    Pages.each(
        o -> client.resources(IPBlock.class).list(o),
        b -> blocks.put(b.getMetadata().getName(), b));
    Map<String, IPAddress> addresses = new TreeMap<>();
    Pages.each(
        o -> client.resources(IPAddress.class).inAnyNamespace().list(o),
        a -> addresses.put(a.getMetadata().getNamespace() + "/" + a.getMetadata().getName(), a));
    return new WhereaboutsState(
        networks, switched, problems, pools, reservations, pods, kipamPools, blocks, addresses);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(GenericKubernetesResource resource) {
    Object spec = resource.getAdditionalProperties().get("spec");
    return spec instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  private static String str(Object value) {
    return value == null ? null : value.toString();
  }
}
