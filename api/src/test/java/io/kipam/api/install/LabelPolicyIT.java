package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.api.v1alpha1.TestAddresses;
import io.kipam.api.v1alpha1.TestBlocks;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The installed policy {@code kipam-labels-immutable}: for the cluster admin and for a node's
 * daemon (a token bound to its Node, writing its own node's objects) alike, every {@code kipam.io/}
 * label of an IPAddress and an IPBlock is refused being added, changed or removed, each refusal
 * naming the object and the label; another label may change and a finalizer may go. Addresses in
 * three namespaces.
 */
@WithControlPlane
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LabelPolicyIT {

  private static final String POOL = "labels-" + Long.toString(System.nanoTime() % 100_000, 36);
  private static final String NODE = "label-node";
  private static final List<String> NAMESPACES =
      List.of(POOL + "-red", POOL + "-green", POOL + "-blue");
  private static final List<String> KIPAM_LABELS =
      List.of(
          ApiConstants.LABEL_POOL,
          ApiConstants.LABEL_BLOCK,
          ApiConstants.LABEL_NODE,
          ApiConstants.LABEL_NETWORK,
          ApiConstants.LABEL_PARENT);
  private static final String OTHER_FINALIZER = "example.com/keep";

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient admin = controlPlane.client();
  private final List<HasMetadata> created = new ArrayList<>();
  private KubernetesClient daemon;
  private boolean daemonPatchesAddresses;
  private int objects;

  @BeforeAll
  void install() {
    KipamInstall.applyWith(controlPlane, List.of(NODE), NAMESPACES);
    daemon = KipamInstall.nodeClient(controlPlane, NODE);
    // RBAC is asked before admission: a daemon without patch on ipaddresses never reaches the
    // policy with an address (kipam-node's role grants it for the finalizer kipam.io/attachment).
    daemonPatchesAddresses =
        KipamInstall.canI(
            controlPlane, KipamInstall.NODE_SA, "patch", "ipaddresses.kipam.io", NAMESPACES.get(0));
    // A policy takes effect a moment after it is stored, and one about custom resources only once
    // kube-apiserver's admission knows their kinds, which on a control plane that just started and
    // just got kipam's CRDs has taken more than 30 s: wait until a relabel is refused.
    IPBlock probe = create(block(true));
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () ->
                assertThatThrownBy(() -> edit(admin, probe, m -> m.getLabels().remove(label(0))))
                    .isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("kipam-labels-immutable"));
  }

  @AfterAll
  void cleanUp() {
    if (daemon != null) {
      daemon.close();
    }
    for (HasMetadata object : created) {
      if (admin.resource(object).get() != null) {
        edit(admin, object, m -> m.setFinalizers(List.of()));
        admin.resource(object).delete();
      }
    }
    NAMESPACES.forEach(n -> admin.namespaces().withName(n).delete());
  }

  @Test
  void theAdminMayNotAddChangeOrRemoveAKipamLabel() {
    everyKipamLabelIsRefused(admin);
  }

  @Test
  void aNodesDaemonMayNotAddChangeOrRemoveAKipamLabelOfItsOwnObjects() {
    everyKipamLabelIsRefused(daemon);
  }

  @Test
  void otherLabelsMayChangeAndOtherFinalizersOnlyByOtherUsers() {
    for (KubernetesClient writer : List.of(admin, daemon)) {
      for (HasMetadata object : objectsOfEachKind(true)) {
        if (!mayPatch(writer, object)) {
          continue;
        }
        HasMetadata relabelled =
            edit(
                writer,
                object,
                m -> {
                  m.getLabels().put("team", "green");
                  m.getLabels().put("tier", "web");
                });
        assertThat(relabelled.getMetadata().getLabels())
            .containsEntry("team", "green")
            .containsEntry("tier", "web")
            .containsEntry(ApiConstants.LABEL_POOL, POOL);
        if (writer == admin) {
          HasMetadata released =
              edit(writer, object, m -> m.getFinalizers().remove(OTHER_FINALIZER));
          assertThat(released.getMetadata().getFinalizers()).doesNotContain(OTHER_FINALIZER);
        } else {
          // A daemon writes only kipam's own finalizer of the kind (the node admission policy).
          assertThatThrownBy(
                  () -> edit(writer, object, m -> m.getFinalizers().remove(OTHER_FINALIZER)))
              .isInstanceOfSatisfying(
                  KubernetesClientException.class,
                  e -> assertThat(e.getMessage()).contains("may add or remove only the finalizer"));
        }
      }
      for (HasMetadata bare : objectsOfEachKind(false)) {
        if (!mayPatch(writer, bare)) {
          continue;
        }
        assertThat(edit(writer, bare, m -> m.setLabels(Map.of("team", "blue"))).getMetadata())
            .extracting(ObjectMeta::getLabels)
            .isEqualTo(Map.of("team", "blue"));
      }
    }
  }

  private void everyKipamLabelIsRefused(KubernetesClient writer) {
    for (HasMetadata labelled : objectsOfEachKind(true)) {
      for (String label : KIPAM_LABELS) {
        refused(
            writer,
            labelled,
            m -> m.getLabels().put(label, "other"),
            label + " changed from " + labelled.getMetadata().getLabels().get(label) + " to other");
        refused(
            writer,
            labelled,
            m -> m.getLabels().remove(label),
            label + " removed (was " + labelled.getMetadata().getLabels().get(label) + ")");
      }
    }
    // Objects without any label, as a hand-made one may be.
    for (HasMetadata bare : objectsOfEachKind(false)) {
      for (String label : KIPAM_LABELS) {
        refused(
            writer,
            bare,
            m -> m.setLabels(new LinkedHashMap<>(Map.of(label, "new"))),
            label + " added (new)");
      }
    }
  }

  /** An IPAddress in each namespace and an IPBlock, of the daemon's node. */
  private List<HasMetadata> objectsOfEachKind(boolean labelled) {
    List<HasMetadata> made = new ArrayList<>();
    for (String namespace : NAMESPACES) {
      made.add(create(address(namespace, labelled)));
    }
    made.add(create(block(labelled)));
    return made;
  }

  private <T extends HasMetadata> T create(T object) {
    T made = admin.resource(object).create();
    created.add(made);
    return made;
  }

  private boolean mayPatch(KubernetesClient writer, HasMetadata object) {
    return writer == admin || object instanceof IPBlock || daemonPatchesAddresses;
  }

  private void refused(
      KubernetesClient writer, HasMetadata object, Consumer<ObjectMeta> change, String label) {
    String what =
        object instanceof IPBlock
            ? "IPBlock " + object.getMetadata().getName()
            : "IPAddress "
                + object.getMetadata().getNamespace()
                + "/"
                + object.getMetadata().getName();
    String message =
        mayPatch(writer, object)
            ? what
                + ": the labels kipam.io/* are set when it is created and never change; label "
                + label
            : "cannot patch resource \"ipaddresses\"";
    assertThatThrownBy(() -> edit(writer, object, change))
        .as("%s: %s", what, label)
        .isInstanceOfSatisfying(
            KubernetesClientException.class,
            e -> {
              assertThat(e.getCode()).isIn(403, 422);
              assertThat(e.getMessage()).contains(message);
            });
    HasMetadata now = admin.resource(object).get();
    assertThat(now.getMetadata().getLabels()).isEqualTo(object.getMetadata().getLabels());
  }

  /** A patch of the object's metadata, as {@code kubectl label} or a daemon's patch sends. */
  private static HasMetadata edit(
      KubernetesClient writer, HasMetadata object, Consumer<ObjectMeta> change) {
    // The current version: a patch of an older one would fail on its resourceVersion.
    return writer
        .resource(writer.resource(object).get())
        .edit(
            current -> {
              change.accept(current.getMetadata());
              return current;
            });
  }

  private static String label(int i) {
    return KIPAM_LABELS.get(i);
  }

  private Map<String, String> labels(String block, boolean labelled) {
    Map<String, String> labels = new LinkedHashMap<>();
    if (labelled) {
      labels.put(ApiConstants.LABEL_POOL, POOL);
      labels.put(ApiConstants.LABEL_BLOCK, block);
      labels.put(ApiConstants.LABEL_NODE, NODE);
      labels.put(ApiConstants.LABEL_NETWORK, "pods");
      labels.put(ApiConstants.LABEL_PARENT, "slot-" + block);
      labels.put("team", "red");
    }
    return labels;
  }

  private IPBlock block(boolean labelled) {
    Cidr cidr = Cidr.parse("10.41." + ++objects + ".0/28");
    IPBlock block = TestBlocks.slot(POOL, cidr.toString(), NODE);
    block.getMetadata().setLabels(labels(ResourceNames.blockLabel(cidr), labelled));
    block
        .getMetadata()
        .setFinalizers(List.of(ApiConstants.FINALIZER_BLOCK_PROTECTION, OTHER_FINALIZER));
    return block;
  }

  private IPAddress address(String namespace, boolean labelled) {
    String ip = "10.41.0." + ++objects;
    IPAddress address = new IPAddress();
    ObjectMeta meta = new ObjectMeta();
    meta.setName(ResourceNames.addressName(POOL, IpAddress.parse(ip)));
    meta.setNamespace(namespace);
    meta.setLabels(labels("10-41-0-0-28", labelled));
    meta.setFinalizers(List.of(ApiConstants.FINALIZER_ATTACHMENT, OTHER_FINALIZER));
    address.setMetadata(meta);
    PodReference pod =
        new PodReference("web-" + ip.replace('.', '-'), UUID.randomUUID().toString());
    address.setSpec(TestAddresses.spec(POOL, "10.41.0.0/28", ip, NODE, pod, 'c'));
    return address;
  }
}
