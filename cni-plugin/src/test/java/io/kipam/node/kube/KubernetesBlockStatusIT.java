package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.ReleaseState;
import io.kipam.node.alloc.BlockObject;
import io.kipam.node.alloc.BlockRef;
import io.kipam.node.alloc.BlockStatusStore.ReleaseAnswer;
import io.kipam.runtime.client.TokenBucket;
import io.kipam.testing.Fixtures;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The node daemon's status writes against the real API server: they touch only their own fields,
 * never land in another object of the same name, and a release answer needs the resourceVersion it
 * was decided on.
 */
@WithControlPlane
class KubernetesBlockStatusIT {

  private final KubernetesClient client;
  private final KubernetesBlockStatus status;

  KubernetesBlockStatusIT(KubernetesClient client) {
    this.client = client;
    this.status = new KubernetesBlockStatus(client, new TokenBucket(50, 100));
  }

  @BeforeAll
  static void crds(KubernetesClient client) {
    KipamCrds.install(client);
  }

  private IPBlock create(String pool, Cidr cidr) {
    IPBlock block = new IPBlock();
    block.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.blockName(pool, cidr))
            .withLabels(Map.of(ApiConstants.LABEL_POOL, pool, ApiConstants.LABEL_NODE, "n1"))
            .build());
    block.setSpec(new IPBlockSpec(pool, cidr.toString(), "n1"));
    return client.resource(block).create();
  }

  private static BlockRef ref(IPBlock block) {
    return new BlockRef(
        block.getSpec().getPool(),
        Cidr.parse(block.getSpec().getCidr()),
        block.getMetadata().getUid());
  }

  private IPBlock read(IPBlock block) {
    return client.resources(IPBlock.class).withName(block.getMetadata().getName()).get();
  }

  private IPBlock request(IPBlock block) {
    return client
        .resources(IPBlock.class)
        .withName(block.getMetadata().getName())
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"status\":{\"release\":{\"state\":\"Requested\",\"requestedAt\":\"t1\","
                + "\"reason\":\"idle\"}}}");
  }

  @Test
  void allocatedIsWrittenWithoutTouchingTheRelease() {
    IPBlock block = request(create(Fixtures.uniqueName("st"), Cidr.parse("10.249.0.0/28")));

    assertThat(status.writeAllocated(Blocks.object(block), 7)).isTrue();

    IPBlock now = read(block);
    assertThat(now.getStatus().getAllocated()).isEqualTo(7);
    assertThat(now.getStatus().getRelease().getState()).isEqualTo(ReleaseState.Requested);
    assertThat(now.getStatus().getRelease().getRequestedAt()).isEqualTo("t1");
  }

  @Test
  void aBlockWithoutStatusGetsOne() {
    IPBlock block = create(Fixtures.uniqueName("st"), Cidr.parse("10.249.0.64/28"));

    assertThat(status.writeAllocated(Blocks.object(block), 2)).isTrue();

    assertThat(read(block).getStatus().getAllocated()).isEqualTo(2);
  }

  @Test
  void aStatusWrittenMeanwhileIsNeverReplaced() {
    IPBlock block = create(Fixtures.uniqueName("st"), Cidr.parse("10.249.0.80/28"));
    BlockObject seen = Blocks.object(block);
    IPBlock requested = request(block);

    assertThat(status.writeAllocated(seen, 2)).isFalse();
    assertThat(read(block).getStatus().getRelease().getState()).isEqualTo(ReleaseState.Requested);

    assertThat(status.writeAllocated(Blocks.object(requested), 2)).isTrue();
    IPBlock now = read(block);
    assertThat(now.getStatus().getAllocated()).isEqualTo(2);
    assertThat(now.getStatus().getRelease().getState()).isEqualTo(ReleaseState.Requested);
  }

  @Test
  void writesForAnEarlierObjectOfTheSameNameDoNotLand() {
    String pool = Fixtures.uniqueName("st");
    Cidr cidr = Cidr.parse("10.249.0.16/28");
    IPBlock earlier = create(pool, cidr);
    BlockObject earlierWithoutStatus = Blocks.object(earlier);
    BlockObject earlierWithStatus = Blocks.object(request(earlier));
    client.resource(earlier).delete();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> read(earlier) == null);
    IPBlock later = create(pool, cidr);
    String version = later.getMetadata().getResourceVersion();

    assertThat(status.writeAllocated(earlierWithoutStatus, 3)).isFalse();
    assertThat(status.writeAllocated(earlierWithStatus, 3)).isFalse();
    assertThat(
            status.answerRelease(
                earlierWithStatus.ref(),
                earlierWithStatus.resourceVersion(),
                new ReleaseAnswer(ReleaseState.Ready, "t", "t", null)))
        .isNull();
    assertThat(read(later).getMetadata().getResourceVersion()).isEqualTo(version);

    IPBlock laterRequested = request(later);
    assertThat(status.writeAllocated(earlierWithStatus, 3)).isFalse();
    assertThat(read(later).getStatus().getAllocated()).isNull();
    assertThat(read(later).getMetadata().getResourceVersion())
        .isEqualTo(laterRequested.getMetadata().getResourceVersion());
  }

  @Test
  void aReleaseAnswerNeedsTheResourceVersionItWasDecidedOn() {
    IPBlock block = create(Fixtures.uniqueName("st"), Cidr.parse("10.249.0.32/28"));
    IPBlock requested = request(block);
    String decidedOn = requested.getMetadata().getResourceVersion();
    // A count written meanwhile changes the resourceVersion: the answer is decided again.
    assertThat(status.writeAllocated(Blocks.object(requested), 0)).isTrue();

    ReleaseAnswer ready = new ReleaseAnswer(ReleaseState.Ready, "t1", "t2", null);
    assertThat(status.answerRelease(ref(block), decidedOn, ready)).isNull();

    String current = read(block).getMetadata().getResourceVersion();
    assertThat(status.answerRelease(ref(block), current, ready)).isNotNull();
    var release = read(block).getStatus().getRelease();
    assertThat(release.getState()).isEqualTo(ReleaseState.Ready);
    assertThat(release.getRequestedAt()).isEqualTo("t1");
    assertThat(release.getRespondedAt()).isEqualTo("t2");
    assertThat(release.getReason()).isEqualTo("idle");
  }

  @Test
  void aRefusalSaysWhy() {
    IPBlock block = create(Fixtures.uniqueName("st"), Cidr.parse("10.249.0.48/28"));
    String version = block.getMetadata().getResourceVersion();

    status.answerRelease(
        ref(block),
        version,
        new ReleaseAnswer(ReleaseState.Refused, "t1", "t2", "3 of its addresses are in use"));

    var release = read(block).getStatus().getRelease();
    assertThat(release.getState()).isEqualTo(ReleaseState.Refused);
    assertThat(release.getReason()).isEqualTo("3 of its addresses are in use");
  }
}
