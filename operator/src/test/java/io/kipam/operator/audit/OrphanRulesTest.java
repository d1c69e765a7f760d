package io.kipam.operator.audit;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.kipam.api.ApiConstants;
import io.kipam.api.v1alpha1.AddressLifecycle;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.PodReference;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OrphanRulesTest {

  /** A cluster of a few objects, as the audit would find them. */
  private static final class Cluster implements OrphanRules.Facts {
    final Map<String, String> pods = new HashMap<>();
    final Set<String> blocks = new HashSet<>(Set.of("b1"));
    final Set<String> nodes = new HashSet<>(Set.of("n1"));

    @Override
    public Optional<String> podUid(String node, String namespace, String name) {
      return Optional.ofNullable(pods.get(namespace + "/" + name));
    }

    @Override
    public boolean blockExists(String name) {
      return blocks.contains(name);
    }

    @Override
    public boolean nodeExists(String name) {
      return nodes.contains(name);
    }
  }

  /** A cluster where the Pod ns/p of UID pod-1 lives, with its block b1 and node n1. */
  private static Cluster withLivePod() {
    Cluster c = new Cluster();
    c.pods.put("ns/p", "pod-1");
    return c;
  }

  private static IPAddress address(String podUid, boolean ownerReference) {
    IPAddress a = new IPAddress();
    ObjectMetaBuilder meta = new ObjectMetaBuilder().withNamespace("ns").withName("a").withUid("u");
    if (ownerReference) {
      meta.withOwnerReferences(
          new OwnerReferenceBuilder()
              .withApiVersion("v1")
              .withKind("Pod")
              .withName("p")
              .withUid(podUid)
              .build());
    }
    a.setMetadata(meta.build());
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp("10.0.0.1");
    spec.setPool("pool");
    spec.setBlock("b1");
    spec.setNode("n1");
    spec.setPod(new PodReference("p", podUid));
    a.setSpec(spec);
    return a;
  }

  private static Optional<OrphanReason> reason(IPAddress a, Cluster c) {
    return OrphanRules.classify(a, c).map(OrphanRules.Verdict::reason);
  }

  @Test
  void anAddressWhosePodBlockAndNodeExistIsNoOrphan() {
    Cluster c = withLivePod();
    assertThat(reason(address("pod-1", true), c)).isEmpty();
  }

  @Test
  void aStaticPodsAddressHeldByItsNodeIsNoOrphanWhateverItsMirrorPodDoes() {
    Cluster c = new Cluster();
    IPAddress a = address("mirror-1", false);
    a.getMetadata()
        .setOwnerReferences(
            List.of(
                new OwnerReferenceBuilder()
                    .withApiVersion("v1")
                    .withKind("Node")
                    .withName("n1")
                    .withUid("node-uid")
                    .build()));
    assertThat(reason(a, c)).as("mirror Pod gone").isEmpty();
    c.pods.put("ns/p", "mirror-2");
    assertThat(reason(a, c)).as("mirror Pod created again with a new UID").isEmpty();
    c.nodes.clear();
    assertThat(reason(a, c)).contains(OrphanReason.NODE);
  }

  @Test
  void aPodOfTheSameNameWithAnotherUidMakesAnOrphan() {
    Cluster c = new Cluster();
    c.pods.put("ns/p", "pod-2");
    assertThat(reason(address("pod-1", true), c)).contains(OrphanReason.POD);
  }

  @Test
  void aMissingPodMakesAnOrphanAndTheVerdictNamesIt() {
    Optional<OrphanRules.Verdict> verdict =
        OrphanRules.classify(address("pod-1", true), new Cluster());
    assertThat(verdict).map(OrphanRules.Verdict::reason).contains(OrphanReason.POD);
    assertThat(verdict.get().detail()).contains("ns/p").contains("pod-1");
  }

  @Test
  void withoutAnOwnerReferenceTheSpecsPodIsChecked() {
    Cluster c = withLivePod();
    assertThat(reason(address("pod-1", false), c)).isEmpty();
    assertThat(reason(address("pod-9", false), c)).contains(OrphanReason.POD);
  }

  @Test
  void aMissingBlockMakesAnOrphanOfAnAddressWhosePodLives() {
    Cluster c = withLivePod();
    c.blocks.clear();
    assertThat(reason(address("pod-1", true), c)).contains(OrphanReason.BLOCK);
  }

  @Test
  void aMissingNodeMakesAnOrphanOfAnAddressWhosePodLives() {
    Cluster c = withLivePod();
    c.nodes.clear();
    assertThat(reason(address("pod-1", true), c)).contains(OrphanReason.NODE);
  }

  @Test
  void thePodIsReportedBeforeTheBlockAndTheBlockBeforeTheNode() {
    Cluster c = new Cluster();
    c.blocks.clear();
    c.nodes.clear();
    assertThat(reason(address("pod-1", true), c)).contains(OrphanReason.POD);
    c.pods.put("ns/p", "pod-1");
    assertThat(reason(address("pod-1", true), c)).contains(OrphanReason.BLOCK);
  }

  private static IPAddress terminating(IPAddress a, String... finalizers) {
    a.getMetadata().setDeletionTimestamp("2025-01-01T00:00:00Z");
    a.getMetadata().setFinalizers(List.of(finalizers));
    return a;
  }

  @Test
  void aTerminatingAddressOnALiveNodeIsTheDaemonsWhateverElseIsMissing() {
    Cluster c = new Cluster();
    c.blocks.clear();
    IPAddress a = terminating(address("pod-1", true), ApiConstants.FINALIZER_ATTACHMENT);
    assertThat(reason(a, c)).as("its pod and block are gone, its node is not").isEmpty();
    assertThat(OrphanRules.keptBy(a, c)).contains("n1");
  }

  @Test
  void aTerminatingAddressWhoseNodeIsGoneIsAnOrphanOfTheNode() {
    Cluster c = new Cluster();
    c.nodes.clear();
    IPAddress a = terminating(address("pod-1", true), ApiConstants.FINALIZER_ATTACHMENT);
    assertThat(reason(a, c)).contains(OrphanReason.NODE);
    assertThat(OrphanRules.keptBy(a, c)).isEmpty();
  }

  @Test
  void anAddressNotBeingDeletedIsKeptByNoNode() {
    Cluster c = withLivePod();
    assertThat(OrphanRules.keptBy(address("pod-1", true), c)).isEmpty();
  }

  @Test
  void aLiveAddressOfAGoneNodeIsDeletedAndItsAttachmentEnded() {
    IPAddress a = address("pod-1", true);
    a.getMetadata().setFinalizers(List.of(ApiConstants.FINALIZER_ATTACHMENT));
    assertThat(OrphanRules.Removal.of(a, goneNode()))
        .isEqualTo(new OrphanRules.Removal(true, true));
  }

  @Test
  void aTerminatingAddressOfAGoneNodeOnlyHasItsAttachmentEnded() {
    IPAddress a =
        terminating(address("pod-1", true), "example.com/keep", ApiConstants.FINALIZER_ATTACHMENT);
    assertThat(OrphanRules.Removal.of(a, goneNode()))
        .isEqualTo(new OrphanRules.Removal(false, true));
  }

  /**
   * A Node that vanished with its pods (kube-controller-manager's pod GC deletes the pods of a
   * deleted Node): its addresses are orphans of their Pod, found first, and no daemon is left to
   * end their attachment, so the removal ends it too. Left to the daemon, the address stayed
   * Terminating until a later audit found it again as an orphan of its Node, at the defaults two
   * orphan graces (20 minutes) after the Node went.
   */
  @Test
  void anOrphanOfAPodOnAGoneNodeHasItsAttachmentEndedWithItsDelete() {
    Cluster c = new Cluster();
    c.nodes.clear();
    IPAddress a = address("pod-1", true);
    a.getMetadata().setFinalizers(List.of(ApiConstants.FINALIZER_ATTACHMENT));
    OrphanRules.Verdict verdict = OrphanRules.classify(a, c).orElseThrow();
    assertThat(verdict.reason()).isEqualTo(OrphanReason.POD);
    assertThat(OrphanRules.Removal.of(a, c)).isEqualTo(new OrphanRules.Removal(true, true));
  }

  @Test
  void orphansOfAPodOrBlockOnALiveNodeAreDeletedAndTheirAttachmentLeftToTheDaemon() {
    // Whatever it is an orphan of (its Pod, its block), its Node is there to end the attachment.
    IPAddress a = address("pod-1", true);
    a.getMetadata().setFinalizers(List.of(ApiConstants.FINALIZER_ATTACHMENT));
    assertThat(OrphanRules.Removal.of(a, withLivePod()))
        .isEqualTo(new OrphanRules.Removal(true, false));
  }

  @Test
  void anAddressWithoutTheFinalizerHasNoAttachmentToEnd() {
    IPAddress a = address("pod-1", true);
    assertThat(AddressLifecycle.attached(a)).isFalse();
    assertThat(OrphanRules.Removal.of(a, goneNode()))
        .isEqualTo(new OrphanRules.Removal(true, false));
  }

  /** A cluster without the address's Node. */
  private static Cluster goneNode() {
    Cluster c = new Cluster();
    c.nodes.clear();
    return c;
  }
}
