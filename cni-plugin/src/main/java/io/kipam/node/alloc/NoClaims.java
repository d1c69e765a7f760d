package io.kipam.node.alloc;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.List;
import java.util.Optional;

/** The {@link ClaimStore} of an allocator made without one: every call is refused. */
final class NoClaims implements ClaimStore {

  private static ClaimException refused() {
    return new ClaimException(
        ClaimException.Kind.INVALID, "this kipam-node was started without IPAMClaim support");
  }

  @Override
  public Claim ensureClaim(
      String namespace,
      String name,
      String network,
      String ifName,
      Controller controller,
      String node) {
    throw refused();
  }

  @Override
  public Optional<Claim> readClaim(String namespace, String name) {
    throw refused();
  }

  @Override
  public List<Claimed> claimedIn(String pool, String claimUid) {
    throw refused();
  }

  @Override
  public Optional<Claimed> readClaimed(String pool, IpAddress ip) {
    throw refused();
  }

  @Override
  public String createClaimed(String pool, IpAddress ip, Cidr slot, Claim claim) {
    throw refused();
  }

  @Override
  public void releaseClaimed(String pool, IpAddress ip, String uid) {
    throw refused();
  }

  @Override
  public Optional<Claim> bindAddresses(Claim claim, List<String> ips) {
    throw refused();
  }

  @Override
  public void writeStatus(Claim claim, List<String> ips, String ownerPod, String node) {
    throw refused();
  }
}
