package io.kipam.operator.cli.importer;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.IpFamily;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.IPPoolSpec;
import io.kipam.api.v1alpha1.SlotModes;
import io.kipam.operator.cli.importer.ImportPlan.Leaked;
import io.kipam.operator.cli.importer.ImportPlan.PlannedAddress;
import io.kipam.operator.cli.importer.ImportPlan.PlannedPool;
import io.kipam.operator.cli.importer.ImportPlan.PlannedSlot;
import io.kipam.operator.cli.importer.WhereaboutsState.LivePod;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Decides an import from what was read, and nothing else (no API calls): one kipam IPPool per
 * whereabouts range (its IPPool), an IPAddress per allocation of a live pod, in slots that are
 * Exclusive to a node when all their imported addresses are on that node and Shared otherwise,
 * whereabouts records of pods that are gone as leaked, and every input it cannot carry over as a
 * problem. Whatever a problem concerns is left out whole, never half written.
 */
public final class ImportPlanner {

  /** Slots of imported pools: /28 (IPv4) and /124 (IPv6), or the pool itself when smaller. */
  static final int BLOCK_V4 = 28;

  static final int BLOCK_V6 = 124;

  private ImportPlanner() {}

  /** The kipam pool for whereabouts' IPPool {@code name}: {@code wb-} and a DNS label of it. */
  public static String kipamPoolName(String whereaboutsPool) {
    String label = "wb-" + dnsLabel(whereaboutsPool);
    return label.length() <= 63 ? label : label.substring(0, 63).replaceAll("-+$", "");
  }

  static String dnsLabel(String text) {
    return text.toLowerCase().replaceAll("[^a-z0-9-]", "-").replaceAll("^-+|-+$", "");
  }

  public static ImportPlan plan(WhereaboutsState state) {
    List<BadInput> problems = new ArrayList<>(state.problems());
    List<Leaked> leaked = new ArrayList<>();
    // whereabouts' pool name -> the ranges (one per NAD) that use it
    Map<String, List<Use>> uses = new TreeMap<>();
    for (WhereaboutsNetwork network : state.networks()) {
      for (WhereaboutsRange range : network.ranges()) {
        uses.computeIfAbsent(
                range.whereaboutsPoolName(network.networkName()), k -> new ArrayList<>())
            .add(new Use(network, range));
      }
    }
    Map<String, WhereaboutsState.Pool> wbPools = new TreeMap<>();
    state.pools().forEach(p -> wbPools.put(p.name(), p));

    List<PlannedPool> pools = new ArrayList<>();
    Map<String, Use> useOf = new LinkedHashMap<>();
    for (var entry : uses.entrySet()) {
      Use first = entry.getValue().get(0);
      boolean agree = true;
      for (Use other : entry.getValue().subList(1, entry.getValue().size())) {
        if (!sameRange(first.range(), other.range())) {
          problems.add(
              new BadInput(
                  "NetworkAttachmentDefinition " + other.network().nad(),
                  "spec.config",
                  "uses whereabouts' IPPool "
                      + entry.getKey()
                      + " with other range_start, range_end, exclude or gateway than "
                      + first.network().nad()
                      + "; one kipam pool cannot have both: make them agree (pool not imported)"));
          agree = false;
        }
      }
      if (!agree) {
        continue;
      }
      String name = kipamPoolName(entry.getKey());
      IPPoolSpec spec = spec(first);
      List<String> nads =
          entry.getValue().stream().map(u -> u.network().nad()).distinct().sorted().toList();
      IPPool existing = state.kipamPools().get(name);
      if (existing != null && !sameSpec(existing.getSpec(), spec)) {
        problems.add(
            new BadInput(
                "IPPool " + name,
                "spec",
                "exists in kipam with another cidr, range, exclude, gateway, network or blockSize"
                    + " than the import of whereabouts' IPPool "
                    + entry.getKey()
                    + " needs (pool not imported)"));
        continue;
      }
      pools.add(new PlannedPool(name, spec, entry.getKey(), nads, existing != null));
      useOf.put(name, first);
    }
    switchedOver(uses.keySet(), wbPools, state, pools, useOf);
    dropOverlaps(pools, useOf, state, problems);

    List<PlannedAddress> addresses = new ArrayList<>();
    for (PlannedPool pool : pools) {
      Use use = useOf.get(pool.name());
      WhereaboutsState.Pool wb = wbPools.remove(pool.whereaboutsPool());
      if (wb == null) {
        continue; // whereabouts has not allocated in this range yet
      }
      addresses.addAll(allocations(pool, use, wb, state, leaked, problems));
    }
    for (WhereaboutsState.Pool unused : wbPools.values()) {
      if (!unused.allocations().isEmpty()) {
        problems.add(
            new BadInput(
                "IPPool " + unused.namespace() + "/" + unused.name() + " (whereabouts)",
                "",
                "no readable NetworkAttachmentDefinition uses this range; its "
                    + unused.allocations().size()
                    + " allocations are not imported"));
      }
    }
    reservations(state, pools, addresses, leaked, problems);
    List<PlannedSlot> slots = slots(pools, addresses, state, problems);
    Set<String> placed = new TreeSet<>();
    slots.forEach(s -> placed.add(s.name()));
    addresses.removeIf(a -> !placed.contains(a.slot()));
    addresses.sort(Comparator.comparing(PlannedAddress::pool).thenComparing(a -> ip(a.ip())));
    return new ImportPlan(
        List.copyOf(pools),
        List.copyOf(slots),
        List.copyOf(addresses),
        List.copyOf(leaked),
        List.copyOf(problems));
  }

  private record Use(WhereaboutsNetwork network, WhereaboutsRange range) {}

  /**
   * whereabouts IPPools whose NetworkAttachmentDefinitions have been switched to kipam already (the
   * import after the switch): imported into the kipam pool an earlier import made of them, found by
   * its name, with its spec, under the CNI name of a switched NAD that names it.
   */
  private static void switchedOver(
      Set<String> planned,
      Map<String, WhereaboutsState.Pool> wbPools,
      WhereaboutsState state,
      List<PlannedPool> pools,
      Map<String, Use> useOf) {
    for (String wbName : wbPools.keySet()) {
      String name = kipamPoolName(wbName);
      IPPool existing = state.kipamPools().get(name);
      if (planned.contains(wbName) || existing == null || existing.getSpec() == null) {
        continue;
      }
      List<SwitchedNetwork> users =
          state.switched().stream()
              .filter(n -> n.pools().contains(name))
              .sorted(java.util.Comparator.comparing(SwitchedNetwork::nad))
              .toList();
      if (users.isEmpty()) {
        continue; // reported as a pool no NAD uses
      }
      IPPoolSpec spec = existing.getSpec();
      WhereaboutsRange range =
          new WhereaboutsRange(
              Cidr.parse(spec.getCidr()),
              spec.getRangeStart() == null ? null : IpAddress.parse(spec.getRangeStart()),
              spec.getRangeEnd() == null ? null : IpAddress.parse(spec.getRangeEnd()),
              spec.getExclude() == null ? List.of() : List.copyOf(spec.getExclude()),
              spec.getGateway());
      WhereaboutsNetwork network =
          new WhereaboutsNetwork(
              users.get(0).nad(),
              users.get(0).cniName(),
              spec.getNetwork() == null ? "" : spec.getNetwork(),
              List.of(range));
      pools.add(
          new PlannedPool(
              name, spec, wbName, users.stream().map(SwitchedNetwork::nad).toList(), true));
      useOf.put(name, new Use(network, range));
    }
  }

  private static boolean sameRange(WhereaboutsRange a, WhereaboutsRange b) {
    return Objects.equals(a.rangeStart(), b.rangeStart())
        && Objects.equals(a.rangeEnd(), b.rangeEnd())
        && new TreeSet<>(a.exclude()).equals(new TreeSet<>(b.exclude()))
        && Objects.equals(a.gateway(), b.gateway());
  }

  static IPPoolSpec spec(WhereaboutsNetwork network, WhereaboutsRange range) {
    return spec(new Use(network, range));
  }

  private static IPPoolSpec spec(Use use) {
    WhereaboutsRange range = use.range();
    IPPoolSpec spec = new IPPoolSpec();
    spec.setCidr(range.cidr().toString());
    if (range.rangeStart() != null) {
      spec.setRangeStart(range.rangeStart().toString());
    }
    if (range.rangeEnd() != null) {
      spec.setRangeEnd(range.rangeEnd().toString());
    }
    if (!range.exclude().isEmpty()) {
      spec.setExclude(List.copyOf(range.exclude()));
    }
    spec.setGateway(range.gateway());
    if (!use.network().networkName().isEmpty()) {
      spec.setNetwork(dnsLabel(use.network().networkName()));
    }
    int slot = range.cidr().family() == IpFamily.V4 ? BLOCK_V4 : BLOCK_V6;
    spec.setBlockSize(Math.max(slot, range.cidr().prefixLength()));
    return spec;
  }

  private static boolean sameSpec(IPPoolSpec a, IPPoolSpec b) {
    return a != null
        && Objects.equals(a.getCidr(), b.getCidr())
        && Objects.equals(a.getRangeStart(), b.getRangeStart())
        && Objects.equals(a.getRangeEnd(), b.getRangeEnd())
        && Objects.equals(
            a.getExclude() == null ? Set.of() : new TreeSet<>(a.getExclude()),
            b.getExclude() == null ? Set.of() : new TreeSet<>(b.getExclude()))
        && Objects.equals(a.getGateway(), b.getGateway())
        && Objects.equals(a.getNetwork(), b.getNetwork())
        && Objects.equals(a.getBlockSize(), b.getBlockSize());
  }

  /**
   * kipam keeps pools of one network apart by refusing overlaps; whereabouts keeps overlapping
   * ranges without {@code network_name} apart only through its reservations. Such pools are not
   * imported: they need a {@code network_name} (or one range) first.
   */
  private static void dropOverlaps(
      List<PlannedPool> pools,
      Map<String, Use> useOf,
      WhereaboutsState state,
      List<BadInput> problems) {
    Set<String> drop = new TreeSet<>();
    for (int i = 0; i < pools.size(); i++) {
      PlannedPool a = pools.get(i);
      Cidr ca = Cidr.parse(a.spec().getCidr());
      for (PlannedPool b : pools.subList(i + 1, pools.size())) {
        if (Objects.equals(a.spec().getNetwork(), b.spec().getNetwork())
            && ca.overlaps(Cidr.parse(b.spec().getCidr()))) {
          for (PlannedPool p : List.of(a, b)) {
            PlannedPool other = p == a ? b : a;
            problems.add(
                new BadInput(
                    "IPPool " + p.whereaboutsPool() + " (whereabouts)",
                    "spec.range",
                    "overlaps "
                        + other.whereaboutsPool()
                        + " in the same network (no network_name tells them apart); kipam pools"
                        + " of one network may not overlap: give one network a network_name"
                        + " (pool not imported)"));
            drop.add(p.name());
          }
        }
      }
      for (IPPool other : state.kipamPools().values()) {
        String name = other.getMetadata().getName();
        if (other.getSpec() == null
            || name.equals(a.name())
            || !Objects.equals(other.getSpec().getNetwork(), a.spec().getNetwork())) {
          continue;
        }
        try {
          if (ca.overlaps(Cidr.parse(other.getSpec().getCidr()))) {
            problems.add(
                new BadInput(
                    "IPPool " + a.whereaboutsPool() + " (whereabouts)",
                    "spec.range",
                    "overlaps kipam's IPPool "
                        + name
                        + " of the same network (pool not imported)"));
            drop.add(a.name());
          }
        } catch (IllegalArgumentException unreadable) {
          // not ours to judge; kipam-operator reports it
        }
      }
    }
    pools.removeIf(p -> drop.contains(p.name()));
    drop.forEach(useOf::remove);
  }

  private static List<PlannedAddress> allocations(
      PlannedPool pool,
      Use use,
      WhereaboutsState.Pool wb,
      WhereaboutsState state,
      List<Leaked> leaked,
      List<BadInput> problems) {
    String object = "IPPool " + wb.namespace() + "/" + wb.name() + " (whereabouts)";
    Cidr cidr = use.range().cidr();
    List<PlannedAddress> out = new ArrayList<>();
    for (WhereaboutsState.Allocation a : wb.allocations()) {
      String field = "spec.allocations[" + a.offset() + "]";
      IpAddress ip;
      try {
        BigInteger offset = new BigInteger(a.offset());
        if (offset.signum() < 0 || offset.compareTo(cidr.size()) >= 0) {
          throw new NumberFormatException("outside " + cidr);
        }
        ip = cidr.network().add(offset);
      } catch (NumberFormatException bad) {
        problems.add(
            new BadInput(object, field, "the offset is not a number inside the range: " + bad));
        continue;
      }
      String[] ref = a.podRef() == null ? new String[0] : a.podRef().split("/", -1);
      if (ref.length != 2 || ref[0].isEmpty() || ref[1].isEmpty()) {
        problems.add(
            new BadInput(object, field + ".podref", "'" + a.podRef() + "' is not namespace/name"));
        continue;
      }
      LivePod pod = state.pods().get(a.podRef());
      if (pod == null || pod.finished()) {
        leaked.add(
            new Leaked(
                object,
                ip.toString(),
                a.podRef(),
                a.containerId(),
                pod == null
                    ? "the pod does not exist"
                    : "the pod has finished (" + pod.phase() + ")"));
        continue;
      }
      if (pod.node() == null || pod.node().isEmpty()) {
        problems.add(
            new BadInput(
                object, field, "pod " + a.podRef() + " is on no node (spec.nodeName is empty)"));
        continue;
      }
      String outside = outsideRange(pool.spec(), ip);
      if (outside != null) {
        problems.add(
            new BadInput(
                object,
                field,
                ip
                    + " of pod "
                    + a.podRef()
                    + " is "
                    + outside
                    + " of the kipam pool "
                    + pool.name()
                    + "; not imported"));
        continue;
      }
      int blockSize = pool.spec().getBlockSize();
      Cidr slot = Cidr.enclosing(ip, blockSize);
      String name = ResourceNames.addressName(pool.name(), ip);
      IPAddress existing = state.kipamAddresses().get(ref[0] + "/" + name);
      if (existing != null && !holds(existing, ip, pod)) {
        problems.add(
            new BadInput(
                "IPAddress " + ref[0] + "/" + name,
                "spec",
                "exists for another pod or address than " + a.podRef() + " " + ip + " (conflict)"));
        continue;
      }
      out.add(
          new PlannedAddress(
              pool.name(),
              ip.toString(),
              ref[0],
              name,
              ref[1],
              pod.uid(),
              pod.node(),
              a.containerId(),
              a.ifName() == null || a.ifName().isEmpty() ? "net1" : a.ifName(),
              use.network().cniName(),
              ResourceNames.blockName(pool.name(), slot),
              null,
              null,
              false,
              existing != null));
    }
    return out;
  }

  private static boolean holds(IPAddress existing, IpAddress ip, LivePod pod) {
    return existing.getSpec() != null
        && ip.toString().equals(existing.getSpec().getIp())
        && existing.getSpec().getPod() != null
        && pod.uid().equals(existing.getSpec().getPod().getUid());
  }

  /** Why {@code ip} is not assignable in the pool, or null when it is. */
  static String outsideRange(IPPoolSpec spec, IpAddress ip) {
    Cidr cidr = Cidr.parse(spec.getCidr());
    if (!cidr.contains(ip)) {
      return "outside " + cidr;
    }
    if (spec.getRangeStart() != null && ip.compareTo(IpAddress.parse(spec.getRangeStart())) < 0) {
      return "before range_start";
    }
    if (spec.getRangeEnd() != null && ip.compareTo(IpAddress.parse(spec.getRangeEnd())) > 0) {
      return "after range_end";
    }
    for (String exclude : spec.getExclude() == null ? List.<String>of() : spec.getExclude()) {
      if (NadConfigParser.sloppyCidr(exclude).contains(ip)) {
        return "excluded (" + exclude + ")";
      }
    }
    if (spec.getGateway() != null && ip.toString().equals(spec.getGateway())) {
      return "the gateway";
    }
    return null;
  }

  /**
   * whereabouts' OverlappingRangeIPReservations: one of a pod that is gone is leaked; one of a live
   * pod whose address no imported allocation carries is a problem (kipam would not know it is
   * taken).
   */
  private static void reservations(
      WhereaboutsState state,
      List<PlannedPool> pools,
      List<PlannedAddress> addresses,
      List<Leaked> leaked,
      List<BadInput> problems) {
    Set<String> networks = new TreeSet<>();
    networks.add("");
    state.networks().forEach(n -> networks.add(n.networkName()));
    // after the switch, a network's name is known only from the pool an earlier import made
    pools.forEach(p -> networks.add(p.spec().getNetwork() == null ? "" : p.spec().getNetwork()));
    Set<String> imported =
        addresses.stream()
            .map(a -> a.ip() + " " + a.namespace() + "/" + a.pod())
            .collect(Collectors.toSet());
    for (WhereaboutsState.Reservation r : state.reservations()) {
      String object = "OverlappingRangeIPReservation " + r.namespace() + "/" + r.name();
      IpAddress ip = reservedAddress(r.name(), networks);
      if (ip == null) {
        problems.add(
            new BadInput(object, "metadata.name", "names no IP address of a known network"));
        continue;
      }
      LivePod pod = r.podRef() == null ? null : state.pods().get(r.podRef());
      if (pod == null || pod.finished()) {
        if (leaked.stream()
            .anyMatch(
                l -> l.ip().equals(ip.toString()) && Objects.equals(l.podRef(), r.podRef()))) {
          continue; // listed already, from its pool's allocation
        }
        leaked.add(
            new Leaked(
                object,
                ip.toString(),
                r.podRef(),
                r.containerId(),
                pod == null
                    ? "the pod does not exist"
                    : "the pod has finished (" + pod.phase() + ")"));
      } else if (!imported.contains(ip + " " + r.podRef())) {
        problems.add(
            new BadInput(
                object,
                "spec.podref",
                "reserves "
                    + ip
                    + " for live pod "
                    + r.podRef()
                    + " but no importable whereabouts IPPool allocation carries it"));
      }
    }
  }

  /** The address an OverlappingRangeIPReservation's name stands for ([network_name-]ip). */
  static IpAddress reservedAddress(String name, Set<String> networks) {
    for (String network : networks) {
      String rest =
          network.isEmpty()
              ? name
              : name.startsWith(network + "-") ? name.substring(network.length() + 1) : null;
      if (rest == null) {
        continue;
      }
      for (String candidate : List.of(rest, rest.replace('-', ':'))) {
        try {
          return IpAddress.parse(candidate);
        } catch (IllegalArgumentException notThis) {
          // try the next spelling
        }
      }
    }
    return null;
  }

  /**
   * The slots of the imported addresses. A slot kipam already has keeps its mode: Shared stays
   * Shared; Exclusive takes only addresses of its node. Addresses of a slot that cannot take them
   * are a problem and left out.
   */
  private static List<PlannedSlot> slots(
      List<PlannedPool> pools,
      List<PlannedAddress> addresses,
      WhereaboutsState state,
      List<BadInput> problems) {
    Map<String, List<PlannedAddress>> bySlot = new TreeMap<>();
    addresses.forEach(a -> bySlot.computeIfAbsent(a.slot(), k -> new ArrayList<>()).add(a));
    List<PlannedSlot> slots = new ArrayList<>();
    List<PlannedAddress> placed = new ArrayList<>();
    for (var entry : bySlot.entrySet()) {
      List<PlannedAddress> in = entry.getValue();
      PlannedAddress first = in.get(0);
      PlannedPool pool =
          pools.stream().filter(p -> p.name().equals(first.pool())).findFirst().orElseThrow();
      Cidr slot = Cidr.enclosing(IpAddress.parse(first.ip()), pool.spec().getBlockSize());
      Set<String> nodes = new TreeSet<>();
      in.forEach(a -> nodes.add(a.node()));
      String node = nodes.size() == 1 ? nodes.iterator().next() : null;
      IPBlock existing = state.kipamBlocks().get(entry.getKey());
      if (existing != null) {
        if (SlotModes.shared(existing)) {
          node = null;
        } else if (node == null || !node.equals(existing.getSpec().getNode())) {
          problems.add(
              new BadInput(
                  "IPBlock " + entry.getKey(),
                  "spec.node",
                  "is held Exclusive by node "
                      + existing.getSpec().getNode()
                      + " but whereabouts gave addresses in it to pods on "
                      + nodes
                      + " (conflict; its "
                      + in.size()
                      + " addresses are not imported)"));
          continue;
        }
      }
      boolean shared = node == null;
      slots.add(
          new PlannedSlot(
              pool.name(), entry.getKey(), slot.toString(), node, in.size(), existing != null));
      for (PlannedAddress a : in) {
        IpAddress ip = IpAddress.parse(a.ip());
        Cidr block = shared ? Cidr.of(ip, ip.family().bits()) : slot;
        placed.add(
            new PlannedAddress(
                a.pool(),
                a.ip(),
                a.namespace(),
                a.name(),
                a.pod(),
                a.podUid(),
                a.node(),
                a.containerId(),
                a.ifName(),
                a.network(),
                a.slot(),
                ResourceNames.blockName(a.pool(), block),
                block.toString(),
                shared,
                a.present()));
      }
    }
    addresses.clear();
    addresses.addAll(placed);
    return slots;
  }

  private static BigInteger ip(String text) {
    return IpAddress.parse(text).toBigInteger();
  }
}
