package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An in-memory {@link ClaimStore} with the API server's rules that matter here: IPAMClaims carry a
 * resourceVersion that every write raises, a status write that names an older resourceVersion fails
 * (409), and a claim's sub-claims are IPBlocks in the shared {@link FakeStore} (named from pool and
 * address, so a second create of one address fails) labelled with the claim's UID. {@link #point}
 * runs before and after every call, so a test can interleave two nodes at each of them.
 */
final class FakeClaimStore implements ClaimStore {

  /** A stored IPAMClaim. */
  record Stored(
      String namespace,
      String name,
      String uid,
      String network,
      long resourceVersion,
      List<String> ips,
      String ownerPod,
      boolean deleting) {

    /** The next version of this claim: the status lists {@code ips} and names {@code ownerPod}. */
    Stored next(List<String> ips, String ownerPod) {
      return new Stored(
          namespace, name, uid, network, resourceVersion + 1, List.copyOf(ips), ownerPod, deleting);
    }
  }

  /** A claim's sub-claim, by block name: the pool, the address and the claim's UID (its label). */
  record Label(String pool, IpAddress ip, String claimUid) {}

  final FakeStore store;
  final Map<String, Stored> claims = new ConcurrentHashMap<>();
  final Map<String, Label> labels = new ConcurrentHashMap<>();

  /** Runs before and after every call, with the call's name and "before" or "after". */
  volatile java.util.function.BiConsumer<String, String> point = (call, when) -> {};

  FakeClaimStore(FakeStore store) {
    this.store = store;
  }

  /** A new claim {@code namespace/name} for {@code network}, without status. */
  Claim add(String namespace, String name, String network) {
    Stored s =
        new Stored(
            namespace, name, UUID.randomUUID().toString(), network, 1, List.of(), null, false);
    claims.put(namespace + "/" + name, s);
    return claim(s);
  }

  Stored stored(Claim claim) {
    return claims.get(claim.namespace() + "/" + claim.name());
  }

  /** Sets the claim's {@code status.ips} as another writer would. */
  void setIps(Claim claim, List<String> ips) {
    claims.computeIfPresent(
        claim.namespace() + "/" + claim.name(), (k, s) -> s.next(ips, s.ownerPod()));
  }

  /**
   * Puts a sub-claim of {@code ip} under {@code parent} with the label of {@code claim} in the
   * store, as a writer other than kipam-node (or a compromised node) would.
   */
  String forge(String pool, IpAddress ip, Cidr parent, Claim claim) {
    String uid = UUID.randomUUID().toString();
    String name = ResourceNames.blockName(pool, Cidr.of(ip, ip.family().bits()));
    store.blocks.put(
        name, new FakeStore.Block(null, uid, ResourceNames.blockName(pool, parent), false, false));
    labels.put(name, new Label(pool, ip, claim.uid()));
    return uid;
  }

  /** The live sub-claims of {@code claimUid} in {@code pool}, by address. */
  List<IpAddress> subClaimsOf(String pool, String claimUid) {
    List<IpAddress> held = new ArrayList<>();
    labels.forEach(
        (name, label) -> {
          if (label.pool().equals(pool)
              && label.claimUid().equals(claimUid)
              && store.blocks.containsKey(name)) {
            held.add(label.ip());
          }
        });
    return held;
  }

  private static Claim claim(Stored s) {
    return new Claim(
        s.namespace(),
        s.name(),
        s.uid(),
        s.network(),
        "eth0",
        null,
        s.deleting(),
        Long.toString(s.resourceVersion()),
        s.ips());
  }

  private <T> T call(String name, java.util.function.Supplier<T> body) {
    point.accept(name, "before");
    try {
      return body.get();
    } finally {
      point.accept(name, "after");
    }
  }

  @Override
  public Claim ensureClaim(
      String namespace,
      String name,
      String network,
      String ifName,
      Controller controller,
      String node) {
    return call(
        "ensureClaim",
        () -> {
          Stored s = claims.get(namespace + "/" + name);
          return s != null ? claim(s) : add(namespace, name, network);
        });
  }

  @Override
  public Optional<Claim> readClaim(String namespace, String name) {
    return call(
        "readClaim",
        () -> Optional.ofNullable(claims.get(namespace + "/" + name)).map(FakeClaimStore::claim));
  }

  @Override
  public List<Claimed> claimedIn(String pool, String claimUid) {
    return call(
        "claimedIn",
        () -> {
          List<Claimed> held = new ArrayList<>();
          labels.forEach(
              (name, label) -> {
                FakeStore.Block block = store.blocks.get(name);
                if (block != null
                    && label.pool().equals(pool)
                    && label.claimUid().equals(claimUid)) {
                  held.add(claimed(label, block));
                }
              });
          return held;
        });
  }

  private static Claimed claimed(Label label, FakeStore.Block block) {
    Cidr slot = block.parent() == null ? null : ResourceNames.parseBlockName(block.parent()).cidr();
    return new Claimed(label.ip(), block.uid(), slot, label.claimUid(), block.deleting());
  }

  @Override
  public Optional<Claimed> readClaimed(String pool, IpAddress ip) {
    return call(
        "readClaimed",
        () -> {
          String name = ResourceNames.blockName(pool, Cidr.of(ip, ip.family().bits()));
          FakeStore.Block block = store.blocks.get(name);
          Label label = labels.get(name);
          return block == null || label == null
              ? Optional.empty()
              : Optional.of(claimed(label, block));
        });
  }

  @Override
  public String createClaimed(String pool, IpAddress ip, Cidr slot, Claim claim) {
    return call(
        "createClaimed",
        () -> {
          String uid = UUID.randomUUID().toString();
          String name = ResourceNames.blockName(pool, Cidr.of(ip, ip.family().bits()));
          FakeStore.Block block =
              new FakeStore.Block(null, uid, ResourceNames.blockName(pool, slot), false, false);
          synchronized (this) {
            if (store.blocks.putIfAbsent(name, block) != null) {
              return null;
            }
            labels.put(name, new Label(pool, ip, claim.uid()));
          }
          return uid;
        });
  }

  @Override
  public void releaseClaimed(String pool, IpAddress ip, String uid) {
    call(
        "releaseClaimed",
        () -> {
          String name = ResourceNames.blockName(pool, Cidr.of(ip, ip.family().bits()));
          synchronized (this) {
            if (store.blocks.computeIfPresent(name, (k, b) -> b.uid().equals(uid) ? null : b)
                == null) {
              labels.remove(name);
            }
          }
          return null;
        });
  }

  /** Binds are counted: {@link #bindsLost} of them found the claim changed. */
  final java.util.concurrent.atomic.AtomicInteger bindsLost =
      new java.util.concurrent.atomic.AtomicInteger();

  @Override
  public Optional<Claim> bindAddresses(Claim claim, List<String> ips) {
    return call(
        "bindAddresses",
        () -> {
          String key = claim.namespace() + "/" + claim.name();
          synchronized (this) {
            Stored s = claims.get(key);
            if (s == null || !s.uid().equals(claim.uid())) {
              throw new ClaimException(
                  ClaimException.Kind.TRY_AGAIN, claim.what() + " was deleted (test)");
            }
            if (!Long.toString(s.resourceVersion()).equals(claim.resourceVersion())) {
              bindsLost.incrementAndGet();
              return Optional.<Claim>empty();
            }
            Stored written = s.next(ips, s.ownerPod());
            claims.put(key, written);
            return Optional.of(claim(written));
          }
        });
  }

  @Override
  public void writeStatus(Claim claim, List<String> ips, String ownerPod, String node) {
    call(
        "writeStatus",
        () -> {
          Stored s = claims.get(claim.namespace() + "/" + claim.name());
          if (s == null || !s.uid().equals(claim.uid())) {
            throw new ClaimException(
                ClaimException.Kind.TRY_AGAIN, claim.what() + " was deleted (test)");
          }
          synchronized (this) {
            claims.put(claim.namespace() + "/" + claim.name(), s.next(ips, ownerPod));
          }
          return null;
        });
  }
}
