package io.kipam.operator.cli.importer;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPAddressSpec;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.api.v1alpha1.SlotModes;
import io.kipam.operator.cli.importer.ImportPlan.PlannedAddress;
import io.kipam.operator.cli.importer.ImportPlan.PlannedPool;
import io.kipam.operator.cli.importer.ImportPlan.PlannedSlot;
import io.kipam.runtime.client.Named;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes an {@link ImportPlan} as kipam-node would have written it: pools, then per pool the
 * IPAddresses (owned by their pods, born with {@code kipam.io/attachment}), the sub-claims of
 * Shared slots, then the slots, so a daemon learns a slot only after what is taken in it. Creates
 * only; a 409 is read back and counted present when it matches, a conflict when not. What the plan
 * found present is counted present and not written: an object gone since the plan read it (the
 * IPAddress of a pod deleted meanwhile) stays gone. Never deletes, never updates a spec: a second
 * run finds everything present, a cut-short run resumes.
 */
public final class ImportWriter {

  private static final Logger log = LoggerFactory.getLogger(ImportWriter.class);

  private static final Pattern LABEL_VALUE =
      Pattern.compile("^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$");

  /** What a run did: objects created, found already there, and conflicts (each named). */
  public record Outcome(int created, int present, List<String> conflicts) {}

  private final KubernetesClient client;
  private int created;
  private int present;
  private final List<String> conflicts = new ArrayList<>();

  public ImportWriter(KubernetesClient client) {
    this.client = client;
  }

  public Outcome write(ImportPlan plan) {
    for (PlannedPool pool : plan.pools()) {
      IPPool written = pool(pool);
      if (written == null) {
        continue;
      }
      String poolUid = written.getMetadata().getUid();
      // What the plan found present is counted, not written again: gone since the plan read it
      // (an IPAddress whose pod was deleted meanwhile), it must stay gone.
      List<PlannedAddress> addresses =
          plan.addresses().stream().filter(a -> a.pool().equals(pool.name())).toList();
      for (PlannedAddress a : addresses) {
        if (a.present()) {
          present++;
        } else {
          address(a);
        }
      }
      // A sub-claim is written for an address found present too: a run cut short between the
      // two left the address without it, and a create that meets it is read back as present.
      addresses.stream().filter(PlannedAddress::subClaim).forEach(a -> subClaim(a, poolUid));
      for (PlannedSlot s : plan.slots()) {
        if (!s.pool().equals(pool.name())) {
          continue;
        }
        if (s.present()) {
          present++;
        } else {
          slot(s, poolUid);
        }
      }
    }
    return new Outcome(created, present, List.copyOf(conflicts));
  }

  private IPPool pool(PlannedPool planned) {
    IPPool pool = new IPPool();
    pool.setMetadata(new ObjectMetaBuilder().withName(planned.name()).build());
    pool.setSpec(planned.spec());
    Written<IPPool> written =
        create(
            "IPPool " + planned.name(),
            pool,
            () -> client.resources(IPPool.class).withName(planned.name()).get(),
            existing ->
                Objects.equals(existing.getSpec().getCidr(), planned.spec().getCidr())
                    && Objects.equals(existing.getSpec().getNetwork(), planned.spec().getNetwork())
                    && Objects.equals(
                        existing.getSpec().getBlockSize(), planned.spec().getBlockSize()));
    return written.object();
  }

  private void address(PlannedAddress a) {
    Map<String, String> labels = new HashMap<>();
    labels.put(ApiConstants.LABEL_POOL, a.pool());
    labels.put(ApiConstants.LABEL_NODE, a.node());
    labels.put(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(Cidr.parse(a.blockCidr())));
    if (LABEL_VALUE.matcher(a.network()).matches()) {
      labels.put(ApiConstants.LABEL_NETWORK, a.network());
    }
    IPAddress object = new IPAddress();
    object.setMetadata(
        new ObjectMetaBuilder()
            .withName(a.name())
            .withNamespace(a.namespace())
            .withLabels(labels)
            .withFinalizers(ApiConstants.FINALIZER_ATTACHMENT)
            .withOwnerReferences(
                new OwnerReferenceBuilder()
                    .withApiVersion("v1")
                    .withKind("Pod")
                    .withName(a.pod())
                    .withUid(a.podUid())
                    .withController(true)
                    .withBlockOwnerDeletion(false)
                    .build())
            .build());
    IPAddressSpec spec = new IPAddressSpec();
    spec.setIp(a.ip());
    spec.setPool(a.pool());
    spec.setBlock(a.block());
    spec.setNode(a.node());
    spec.setNetwork(a.network());
    spec.setPod(new PodReference(a.pod(), a.podUid()));
    spec.setContainerID(a.containerId());
    spec.setInterfaceName(a.ifName());
    object.setSpec(spec);
    create(
        "IPAddress " + a.namespace() + "/" + a.name(),
        object,
        () -> client.resources(IPAddress.class).inNamespace(a.namespace()).withName(a.name()).get(),
        existing ->
            a.ip().equals(existing.getSpec().getIp())
                && existing.getSpec().getPod() != null
                && a.podUid().equals(existing.getSpec().getPod().getUid()));
  }

  private void subClaim(PlannedAddress a, String poolUid) {
    Cidr host = Cidr.parse(a.blockCidr());
    Cidr slot = ResourceNames.parseBlockName(a.slot()).cidr();
    IPBlock block =
        block(
            a.block(),
            IPBlockSpec.subClaim(a.pool(), host.toString(), a.node(), a.slot()),
            Map.of(
                ApiConstants.LABEL_POOL, a.pool(),
                ApiConstants.LABEL_NODE, a.node(),
                ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(host),
                ApiConstants.LABEL_PARENT, ResourceNames.blockLabel(slot)),
            a.pool(),
            poolUid);
    Written<IPBlock> written =
        create(
            "IPBlock " + a.block() + " (sub-claim)",
            block,
            () -> client.resources(IPBlock.class).withName(a.block()).get(),
            existing ->
                a.slot().equals(existing.getSpec().getParent())
                    && a.node().equals(existing.getSpec().getNode())
                    && existing.getMetadata().getDeletionTimestamp() == null);
    if (written.created()) {
      status(a.block(), Map.of("allocated", 1));
    }
  }

  private void slot(PlannedSlot s, String poolUid) {
    Cidr cidr = Cidr.parse(s.cidr());
    Map<String, String> labels = new HashMap<>();
    labels.put(ApiConstants.LABEL_POOL, s.pool());
    labels.put(ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(cidr));
    if (!s.shared()) {
      labels.put(ApiConstants.LABEL_NODE, s.node());
    }
    IPBlock block =
        block(s.name(), new IPBlockSpec(s.pool(), s.cidr(), s.node()), labels, s.pool(), poolUid);
    Written<IPBlock> written =
        create(
            "IPBlock " + s.name() + (s.shared() ? " (Shared slot)" : " (slot of " + s.node() + ")"),
            block,
            () -> client.resources(IPBlock.class).withName(s.name()).get(),
            existing ->
                existing.getMetadata().getDeletionTimestamp() == null
                    && existing.getSpec().getParent() == null
                    && (s.shared()
                        ? SlotModes.shared(existing)
                        : s.node().equals(existing.getSpec().getNode())
                            && !SlotModes.shared(existing)));
    if (written.created()) {
      status(
          s.name(),
          s.shared() ? Map.of("mode", "Shared") : Map.of("allocated", (long) s.addresses()));
    }
  }

  private static IPBlock block(
      String name, IPBlockSpec spec, Map<String, String> labels, String pool, String poolUid) {
    IPBlock block = new IPBlock();
    block.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withLabels(labels)
            .withFinalizers(ApiConstants.FINALIZER_BLOCK_PROTECTION)
            .withOwnerReferences(poolOwner(pool, poolUid))
            .build());
    block.setSpec(spec);
    return block;
  }

  private static OwnerReference poolOwner(String pool, String uid) {
    return new OwnerReferenceBuilder()
        .withApiVersion(ApiConstants.API_VERSION)
        .withKind(IPPool.KIND)
        .withName(pool)
        .withUid(uid)
        .withBlockOwnerDeletion(false)
        .build();
  }

  /** The status a daemon would write: a Shared slot's mode, a slot's or sub-claim's count. */
  private void status(String block, Map<String, Object> status) {
    try {
      Named.object(client, IPBlock.class, block)
          .subresource("status")
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              Serialization.asJson(Map.of("status", status)));
    } catch (KubernetesClientException e) {
      // The daemon of the node writes the count itself; a Shared slot without spec.node is
      // Shared for every reader whatever status.mode says.
      log.warn("cannot write the status of IPBlock {}: {}", block, e.toString());
    }
  }

  /** What {@link #create} ended with: the object (null on a conflict), and whether it made it. */
  private record Written<T>(T object, boolean created) {}

  /**
   * Creates {@code object}; on 409 reads what is there: present when {@code matches}, else a
   * conflict (named in the outcome, left as it is).
   */
  private <T extends HasMetadata> Written<T> create(
      String what, T object, Supplier<T> read, Predicate<T> matches) {
    try {
      T done = client.resource(object).create();
      created++;
      log.info("created {}", what);
      return new Written<>(done, true);
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        conflicts.add(what + ": the API server refused it: " + e.getMessage());
        return new Written<>(null, false);
      }
    }
    T existing = read.get();
    if (existing != null && matches.test(existing)) {
      present++;
      return new Written<>(existing, false);
    }
    conflicts.add(what + " already exists and differs from the plan (left as it is)");
    return new Written<>(null, false);
  }
}
