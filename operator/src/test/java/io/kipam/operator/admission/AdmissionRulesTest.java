package io.kipam.operator.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.BlockMode;
import io.kipam.api.v1alpha1.ClaimReference;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPBlockStatus;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What the webhook's rules answer, for every shape of block an IPAddress or sub-claim can name. */
class AdmissionRulesTest {

  private final Map<String, IPBlock> cache = new HashMap<>();
  private final Map<String, IPBlock> stored = new HashMap<>();
  private final AdmissionRules rules =
      new AdmissionRules(
          new AdmissionRules.Blocks() {
            @Override
            public Optional<IPBlock> cached(String name) {
              return Optional.ofNullable(cache.get(name));
            }

            @Override
            public Optional<IPBlock> fresh(String name) {
              return Optional.ofNullable(stored.get(name));
            }
          });

  @Test
  void anAddressMayNameItsNodesSlotASharedSlotOrItsClaimsSubClaim() {
    store(slot("p.10-0-0-0-28", "p", "10.0.0.0/28", "n1", false));
    store(slot("p.10-0-0-16-28", "p", "10.0.0.16/28", null, false));
    store(slot("p.10-0-0-32-28", "p", "10.0.0.32/28", "n2", true)); // converted
    IPBlock claimed = subClaim("p.10-0-0-17-32", "p", "10.0.0.17/32", null, "p.10-0-0-16-28");
    claimed.getSpec().setClaim(claim("q1", "vm-a"));
    store(claimed);
    store(subClaim("p.10-0-0-18-32", "p", "10.0.0.18/32", "n1", "p.10-0-0-16-28"));

    assertThat(rules.addressCreate(address("q0", "10-0-0-0-28", "n1", null), "n1").allowed())
        .isTrue();
    assertThat(rules.addressCreate(address("q0", "10-0-0-16-28", "n1", null), "n1").allowed())
        .isTrue();
    assertThat(rules.addressCreate(address("q0", "10-0-0-32-28", "n1", null), "n1").allowed())
        .isTrue();
    assertThat(rules.addressCreate(address("q1", "10-0-0-17-32", "n1", "vm-a"), "n1").allowed())
        .isTrue();
    assertThat(rules.addressCreate(address("q0", "10-0-0-18-32", "n1", null), "n1").allowed())
        .isTrue();
  }

  @Test
  void anAddressNamingAnotherNodesBlockAnotherClaimOrNoBlockIsRefusedNamingIt() {
    store(slot("p.10-0-0-0-28", "p", "10.0.0.0/28", "n2", false));
    IPBlock claimed = subClaim("p.10-0-0-17-32", "p", "10.0.0.17/32", null, "p.10-0-0-16-28");
    claimed.getSpec().setClaim(claim("q1", "vm-a"));
    store(claimed);
    store(subClaim("p.10-0-0-18-32", "p", "10.0.0.18/32", "n2", "p.10-0-0-16-28"));

    assertThat(rules.addressCreate(address("q0", "10-0-0-0-28", "n1", null), "n1").message())
        .contains("naming IPBlock p.10-0-0-0-28", "held by node n2 and not Shared");
    assertThat(rules.addressCreate(address("q2", "10-0-0-17-32", "n1", "vm-a"), "n1").message())
        .contains("sub-claim of IPAMClaim q1/vm-a");
    assertThat(rules.addressCreate(address("q1", "10-0-0-17-32", "n1", "vm-b"), "n1").allowed())
        .isFalse();
    assertThat(rules.addressCreate(address("q0", "10-0-0-18-32", "n1", null), "n1").message())
        .contains("held by node n2");
    assertThat(rules.addressCreate(address("q0", "10-0-0-48-28", "n1", null), "n1").message())
        .contains("IPBlock p.10-0-0-48-28", "no such IPBlock exists");
  }

  @Test
  void aStaleCacheNeverRefusesWhatTheStoredBlockAllows() {
    stored.put("p.10-0-0-0-28", slot("p.10-0-0-0-28", "p", "10.0.0.0/28", "n2", true));
    cache.put("p.10-0-0-0-28", slot("p.10-0-0-0-28", "p", "10.0.0.0/28", "n2", false));
    stored.put("p.10-0-0-16-28", slot("p.10-0-0-16-28", "p", "10.0.0.16/28", "n1", false));

    assertThat(rules.addressCreate(address("q0", "10-0-0-0-28", "n1", null), "n1").allowed())
        .isTrue();
    assertThat(rules.addressCreate(address("q0", "10-0-0-16-28", "n1", null), "n1").allowed())
        .isTrue();
  }

  @Test
  void writesTheRulesDoNotJudgeAreAllowed() {
    assertThat(rules.addressCreate(address("q0", "10-0-0-0-28", "n1", null), null).allowed())
        .as("a token bound to no single node: the policies decide")
        .isTrue();
    assertThat(rules.addressCreate(address("q0", "10-0-0-0-28", "n2", null), "n1").allowed())
        .as("an address for another node: node-policy.yaml refuses it")
        .isTrue();
    assertThat(
            rules
                .blockCreate(slot("p.10-0-0-0-28", "p", "10.0.0.0/28", "n1", false), "n1")
                .allowed())
        .as("a slot claim")
        .isTrue();
  }

  @Test
  void aSubClaimLiesInsideAnExistingSharedSlotOfItsPoolOrTheCallersOwn() {
    store(slot("p.10-0-0-0-28", "p", "10.0.0.0/28", null, false));
    store(slot("p.10-0-0-16-28", "p", "10.0.0.16/28", "n1", false));
    store(slot("p.10-0-0-32-28", "p", "10.0.0.32/28", "n2", false));
    store(subClaim("p.10-0-0-3-32", "p", "10.0.0.3/32", "n2", "p.10-0-0-0-28"));

    assertThat(sub("10.0.0.5/32", "p.10-0-0-0-28").allowed()).isTrue();
    assertThat(sub("10.0.0.20/32", "p.10-0-0-16-28").allowed()).as("its own slot").isTrue();
    assertThat(sub("10.0.0.33/32", "p.10-0-0-32-28").message()).contains("Exclusive to node n2");
    assertThat(sub("10.0.0.40/32", "p.10-0-0-0-28").message()).contains("inside its parent");
    assertThat(sub("10.0.0.3/32", "p.10-0-0-3-32").message()).contains("not a slot");
    assertThat(sub("10.0.0.50/32", "p.10-0-0-48-28").message())
        .contains("under p.10-0-0-48-28", "no such IPBlock exists");
    IPBlock otherPool = subClaim("q.10-0-0-5-32", "q", "10.0.0.5/32", "n1", "p.10-0-0-0-28");
    assertThat(rules.blockCreate(otherPool, "n1").message()).contains("inside its parent");
  }

  private AdmissionRules.Verdict sub(String cidr, String parent) {
    return rules.blockCreate(subClaim("x", "p", cidr, "n1", parent), "n1");
  }

  private void store(IPBlock block) {
    cache.put(block.getMetadata().getName(), block);
    stored.put(block.getMetadata().getName(), block);
  }

  private static IPBlock slot(String name, String pool, String cidr, String node, boolean shared) {
    IPBlock block = new IPBlock();
    block.setMetadata(new ObjectMetaBuilder().withName(name).build());
    block.setSpec(new IPBlockSpec(pool, cidr, node));
    if (shared) {
      IPBlockStatus status = new IPBlockStatus();
      status.setMode(BlockMode.Shared);
      block.setStatus(status);
    }
    return block;
  }

  private static IPBlock subClaim(
      String name, String pool, String cidr, String node, String parent) {
    IPBlock block = new IPBlock();
    block.setMetadata(new ObjectMetaBuilder().withName(name).build());
    block.setSpec(IPBlockSpec.subClaim(pool, cidr, node, parent));
    return block;
  }

  private static ClaimReference claim(String namespace, String name) {
    ClaimReference claim = new ClaimReference();
    claim.setNamespace(namespace);
    claim.setName(name);
    return claim;
  }

  private static IPAddress address(String namespace, String blockLabel, String node, String claim) {
    IPAddress address = new IPAddress();
    address.setMetadata(
        new ObjectMetaBuilder()
            .withNamespace(namespace)
            .withName("p.x")
            .withLabels(Map.of(ApiConstants.LABEL_BLOCK, blockLabel, ApiConstants.LABEL_POOL, "p"))
            .build());
    IPAddressSpec spec = new IPAddressSpec();
    spec.setPool("p");
    spec.setNode(node);
    spec.setClaim(claim);
    address.setSpec(spec);
    return address;
  }
}
