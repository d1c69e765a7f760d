package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.cni.spec.Attachment;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What one ADD asks for, resolved once per interface (design §5c): the attachment and its pod, the
 * network configuration's name ({@code network}, recorded in each IPAddress), the pools' network
 * the interface's configuration decides ({@code poolNetwork}: {@code spec.network} of its pools,
 * {@link PoolView#PRIMARY} for the primary network), the MAC, and one {@link Family} per address
 * family: the pools it may use in order of preference and the intent. Every pool of a family is of
 * {@code poolNetwork} and admits the pod and the node; the {@link AddressGate} checks it again
 * before any write.
 */
public record AddRequest(
    Attachment attachment,
    PodRef pod,
    String network,
    String poolNetwork,
    String mac,
    List<Family> families) {

  public AddRequest {
    Objects.requireNonNull(attachment, "attachment");
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(network, "network");
    poolNetwork = poolNetwork == null ? PoolView.PRIMARY : poolNetwork;
    families = List.copyOf(families);
  }

  /** The pools of one address family, in order of preference, and how the address is chosen. */
  public record Family(List<PoolView> pools, Intent intent) {
    public Family {
      pools = List.copyOf(pools);
      if (pools.isEmpty()) {
        throw new IllegalArgumentException("a family needs at least one pool");
      }
      Objects.requireNonNull(intent, "intent");
    }

    /** The first pool of the family that holds {@code ip}, if any. */
    public Optional<PoolView> poolOf(IpAddress ip) {
      return pools.stream().filter(p -> p.layout().cidr().contains(ip)).findFirst();
    }
  }

  /** How an address is chosen: each intent is served by its own address source. */
  public sealed interface Intent {}

  /** Any free address of the family's pools. */
  public record Dynamic() implements Intent {}

  /** The address {@code ip} the pod asks for by name ({@code ips}, {@code IP=}, kipam.io/ips). */
  public record Chosen(IpAddress ip) implements Intent {}

  /**
   * The address of IPAMClaim {@code claim}, which keeps it when the attachment ends; {@code chosen}
   * when the pod asks for one by name (a virtual machine with a fixed address).
   */
  public record Claimed(ClaimStore.Claim claim, Optional<IpAddress> chosen) implements Intent {}

  /** A request for any free address of each pool, one pool per family, on the primary network. */
  public static AddRequest dynamic(
      List<PoolView> pools, Attachment attachment, PodRef pod, String network, String mac) {
    return new AddRequest(
        attachment,
        pod,
        network,
        pools.isEmpty() ? PoolView.PRIMARY : pools.get(0).network(),
        mac,
        pools.stream().map(p -> new Family(List.of(p), new Dynamic())).toList());
  }

  /** The IPAMClaim the request attaches, if any. */
  public Optional<ClaimStore.Claim> claim() {
    return families.stream()
        .map(Family::intent)
        .filter(Claimed.class::isInstance)
        .map(i -> ((Claimed) i).claim())
        .findFirst();
  }

  /** The request's own view of pool {@code name}, if one of its families may use it. */
  public Optional<PoolView> pool(String name) {
    return families.stream()
        .flatMap(f -> f.pools().stream())
        .filter(p -> p.name().equals(name))
        .findFirst();
  }

  /**
   * The IPAddress of {@code ip} in {@code block} of {@code pool} on {@code node} for this request
   * (naming its claim, if any), not written yet.
   */
  Lease unwritten(PoolView pool, IpAddress ip, Cidr block, String node) {
    return new Lease(
        pool.name(),
        ip,
        block,
        node,
        network,
        attachment,
        pod,
        mac,
        null,
        claim().map(ClaimStore.Claim::name).orElse(null));
  }
}
