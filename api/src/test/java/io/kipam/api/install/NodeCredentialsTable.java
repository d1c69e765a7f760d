package io.kipam.api.install;

import static io.kipam.api.install.NodeCredentialsTable.Answer.ALLOWED;
import static io.kipam.api.install.NodeCredentialsTable.Answer.REFUSED;

import java.util.ArrayList;
import java.util.List;

/**
 * Who may write what with kipam-node's credentials (design §7), as one table: for each resource and
 * verb the kipam-node ClusterRole grants (and those it does not, on the same objects), each field a
 * node can send, and each shape of object, the answer for a token bound to the node, for a token of
 * the same service account without a node name, and for a token bound to a Node that no longer
 * exists. {@link NodeCredentialsTableIT} sends every row as every identity.
 *
 * <p>"Own" and "other" are seen from the node whose token writes: its own slot, address, claim
 * sub-claim, IPAMClaim and Node, and another node's. The node-less shapes are a claim's sub-claim,
 * a slot Shared from birth, and a slot the node held and converted to Shared.
 */
final class NodeCredentialsTable {

  private NodeCredentialsTable() {}

  enum Answer {
    ALLOWED,
    REFUSED
  }

  /** The three tokens of kipam-node's service account. */
  enum Identity {
    NODE_BOUND("bound to its Node"),
    NO_NODE_NAME("without a node name"),
    MISSING_NODE("bound to a deleted Node");

    final String text;

    Identity(String text) {
      this.text = text;
    }
  }

  enum Target {
    OWN_SLOT("its own slot"),
    OTHER_SLOT("another node's slot"),
    OWN_CLAIM_SUB_CLAIM("a claim sub-claim it made"),
    OTHER_CLAIM_SUB_CLAIM("a claim sub-claim another node made"),
    SHARED_SLOT("a slot Shared from birth"),
    CONVERTED_SLOT("its slot converted to Shared"),
    OWN_ADDRESS("its own IPAddress"),
    OTHER_ADDRESS("another node's IPAddress"),
    POOL("a pool"),
    OWN_CLAIM("an IPAMClaim of its StatefulSet pod"),
    OTHER_CLAIM("an IPAMClaim of another node's pod"),
    OWN_NODE("its own Node"),
    OTHER_NODE("another Node"),
    NAMESPACE("a namespace");

    final String text;

    Target(String text) {
      this.text = text;
    }
  }

  enum Verb {
    GET,
    LIST,
    CREATE,
    PATCH,
    DELETE
  }

  /** What a write sends; NONE for reads, creates (the whole object) and deletes. */
  enum Field {
    NONE("-"),
    LABEL_KIPAM("a kipam.io/* label"),
    LABEL("another label"),
    ANNOTATION("an annotation"),
    DEMAND("annotation kipam.io/demand"),
    FINALIZER_KIPAM("kipam's finalizer, added or taken off"),
    FINALIZER_OTHER("another finalizer"),
    OWNER_REFERENCE("ownerReferences"),
    SPEC("spec"),
    STATUS("status");

    final String text;

    Field(String text) {
      this.text = text;
    }
  }

  /** One row: the request, the answer for each identity, and the rule of design §7 it is. */
  record Row(
      String resource,
      Verb verb,
      Field field,
      Target target,
      Answer bound,
      Answer noNodeName,
      Answer missingNode,
      String rule) {

    Answer expected(Identity identity) {
      return switch (identity) {
        case NODE_BOUND -> bound;
        case NO_NODE_NAME -> noNodeName;
        case MISSING_NODE -> missingNode;
      };
    }
  }

  // The rules, in design §7's words.
  private static final String OWN = "a node writes its own node's objects";
  private static final String NOT_ITS = "a node writes only objects of its own node";
  private static final String LABELS = "kipam.io/* labels are written once, at create";
  private static final String FINALIZERS = "a node adds or removes only kipam's own finalizer";
  private static final String LIVE = "kipam's finalizer comes off only an object being deleted";
  private static final String SPEC = "a block's and an address's spec never change";
  private static final String NODELESS =
      "a node-less object's metadata and status are kipam-operator's";
  private static final String SHARED = "only kipam-operator lets a Shared slot go";
  private static final String CREATOR =
      "only its creator or kipam-operator deletes a claim sub-claim";
  private static final String CREATED_BY =
      "a node-less object carries its creator, the node itself";
  private static final String HOLDER = "a converted slot keeps spec.node: its holder counts it";
  private static final String DEMAND = "a node changes only kipam.io/demand of its own Node";
  private static final String RBAC = "not granted by the kipam-node ClusterRole";
  private static final String READ = "the role's reads: no admission looks at them";
  private static final String DOCUMENTED =
      "admitted by design, written in docs/security.md (no policy reads it)";

  private static final List<Field> METADATA =
      List.of(
          Field.LABEL_KIPAM,
          Field.LABEL,
          Field.ANNOTATION,
          Field.DEMAND,
          Field.FINALIZER_KIPAM,
          Field.FINALIZER_OTHER,
          Field.OWNER_REFERENCE);

  /** The table. */
  static List<Row> rows() {
    List<Row> rows = new ArrayList<>();
    String blocks = "ipblocks";
    String status = "ipblocks/status";

    // Its own slot (Exclusive, spec.node is the node; made without a finalizer).
    rows.add(read(blocks, Target.OWN_SLOT));
    rows.add(node(blocks, Verb.CREATE, Field.NONE, Target.OWN_SLOT, ALLOWED, OWN));
    rows.add(node(blocks, Verb.PATCH, Field.LABEL_KIPAM, Target.OWN_SLOT, REFUSED, LABELS));
    rows.add(node(blocks, Verb.PATCH, Field.LABEL, Target.OWN_SLOT, ALLOWED, OWN));
    rows.add(node(blocks, Verb.PATCH, Field.ANNOTATION, Target.OWN_SLOT, ALLOWED, OWN));
    rows.add(node(blocks, Verb.PATCH, Field.DEMAND, Target.OWN_SLOT, ALLOWED, OWN));
    rows.add(node(blocks, Verb.PATCH, Field.FINALIZER_KIPAM, Target.OWN_SLOT, ALLOWED, OWN));
    rows.add(node(blocks, Verb.PATCH, Field.FINALIZER_OTHER, Target.OWN_SLOT, REFUSED, FINALIZERS));
    rows.add(node(blocks, Verb.PATCH, Field.OWNER_REFERENCE, Target.OWN_SLOT, ALLOWED, OWN));
    rows.add(node(blocks, Verb.PATCH, Field.SPEC, Target.OWN_SLOT, REFUSED, SPEC));
    rows.add(node(status, Verb.PATCH, Field.STATUS, Target.OWN_SLOT, ALLOWED, OWN));
    rows.add(node(blocks, Verb.DELETE, Field.NONE, Target.OWN_SLOT, ALLOWED, OWN));

    // Another node's slot, and another node's IPAddress: nothing but reads.
    for (Target other : List.of(Target.OTHER_SLOT, Target.OTHER_ADDRESS)) {
      String resource = other == Target.OTHER_SLOT ? blocks : "ipaddresses";
      rows.add(read(resource, other));
      rows.add(node(resource, Verb.CREATE, Field.NONE, other, REFUSED, NOT_ITS));
      for (Field field : METADATA) {
        rows.add(node(resource, Verb.PATCH, field, other, REFUSED, NOT_ITS));
      }
      rows.add(node(resource, Verb.PATCH, Field.SPEC, other, REFUSED, NOT_ITS));
      if (other == Target.OTHER_SLOT) {
        rows.add(node(status, Verb.PATCH, Field.STATUS, other, REFUSED, NOT_ITS));
      }
      rows.add(node(resource, Verb.DELETE, Field.NONE, other, REFUSED, NOT_ITS));
    }

    // The node-less shapes: reads; their metadata, spec and status are never a node's to change.
    for (Target nodeless :
        List.of(
            Target.OWN_CLAIM_SUB_CLAIM,
            Target.OTHER_CLAIM_SUB_CLAIM,
            Target.SHARED_SLOT,
            Target.CONVERTED_SLOT)) {
      rows.add(read(blocks, nodeless));
      for (Field field : METADATA) {
        rows.add(node(blocks, Verb.PATCH, field, nodeless, REFUSED, NODELESS));
      }
      rows.add(node(blocks, Verb.PATCH, Field.SPEC, nodeless, REFUSED, SPEC));
    }
    rows.add(
        node(blocks, Verb.CREATE, Field.NONE, Target.OWN_CLAIM_SUB_CLAIM, ALLOWED, CREATED_BY));
    rows.add(
        node(blocks, Verb.CREATE, Field.NONE, Target.OTHER_CLAIM_SUB_CLAIM, REFUSED, CREATED_BY));
    rows.add(node(blocks, Verb.CREATE, Field.NONE, Target.SHARED_SLOT, REFUSED, CREATED_BY));
    rows.add(node(status, Verb.PATCH, Field.STATUS, Target.OWN_CLAIM_SUB_CLAIM, REFUSED, NODELESS));
    rows.add(
        node(status, Verb.PATCH, Field.STATUS, Target.OTHER_CLAIM_SUB_CLAIM, REFUSED, NODELESS));
    rows.add(node(status, Verb.PATCH, Field.STATUS, Target.SHARED_SLOT, REFUSED, NODELESS));
    rows.add(node(status, Verb.PATCH, Field.STATUS, Target.CONVERTED_SLOT, ALLOWED, HOLDER));
    rows.add(node(blocks, Verb.DELETE, Field.NONE, Target.OWN_CLAIM_SUB_CLAIM, ALLOWED, CREATOR));
    rows.add(node(blocks, Verb.DELETE, Field.NONE, Target.OTHER_CLAIM_SUB_CLAIM, REFUSED, CREATOR));
    rows.add(node(blocks, Verb.DELETE, Field.NONE, Target.SHARED_SLOT, REFUSED, SHARED));
    rows.add(node(blocks, Verb.DELETE, Field.NONE, Target.CONVERTED_SLOT, REFUSED, SHARED));

    // Its own IPAddress (with kipam.io/attachment, not being deleted).
    String addresses = "ipaddresses";
    rows.add(read(addresses, Target.OWN_ADDRESS));
    rows.add(node(addresses, Verb.CREATE, Field.NONE, Target.OWN_ADDRESS, ALLOWED, OWN));
    rows.add(node(addresses, Verb.PATCH, Field.LABEL_KIPAM, Target.OWN_ADDRESS, REFUSED, LABELS));
    rows.add(node(addresses, Verb.PATCH, Field.LABEL, Target.OWN_ADDRESS, ALLOWED, OWN));
    rows.add(node(addresses, Verb.PATCH, Field.ANNOTATION, Target.OWN_ADDRESS, ALLOWED, OWN));
    rows.add(node(addresses, Verb.PATCH, Field.DEMAND, Target.OWN_ADDRESS, ALLOWED, OWN));
    rows.add(node(addresses, Verb.PATCH, Field.FINALIZER_KIPAM, Target.OWN_ADDRESS, REFUSED, LIVE));
    rows.add(
        node(
            addresses, Verb.PATCH, Field.FINALIZER_OTHER, Target.OWN_ADDRESS, REFUSED, FINALIZERS));
    rows.add(node(addresses, Verb.PATCH, Field.OWNER_REFERENCE, Target.OWN_ADDRESS, ALLOWED, OWN));
    rows.add(node(addresses, Verb.PATCH, Field.SPEC, Target.OWN_ADDRESS, REFUSED, SPEC));
    rows.add(node(addresses, Verb.DELETE, Field.NONE, Target.OWN_ADDRESS, ALLOWED, OWN));

    // Nodes: read any, change only kipam.io/demand of its own.
    for (Target node : List.of(Target.OWN_NODE, Target.OTHER_NODE)) {
      rows.add(read("nodes", node));
      rows.add(rbac("nodes", Verb.CREATE, Field.NONE, node));
      for (Field field : METADATA) {
        boolean demand = field == Field.DEMAND && node == Target.OWN_NODE;
        rows.add(node("nodes", Verb.PATCH, field, node, demand ? ALLOWED : REFUSED, DEMAND));
      }
      rows.add(node("nodes", Verb.PATCH, Field.SPEC, node, REFUSED, DEMAND));
      rows.add(rbac("nodes/status", Verb.PATCH, Field.STATUS, node));
      rows.add(rbac("nodes", Verb.DELETE, Field.NONE, node));
    }

    // Pools: listed and watched, never written.
    rows.add(read("ippools", Target.POOL));
    rows.add(rbac("ippools", Verb.CREATE, Field.NONE, Target.POOL));
    for (Field field : METADATA) {
      rows.add(rbac("ippools", Verb.PATCH, field, Target.POOL));
    }
    rows.add(rbac("ippools", Verb.PATCH, Field.SPEC, Target.POOL));
    rows.add(rbac("ippools/status", Verb.PATCH, Field.STATUS, Target.POOL));
    rows.add(rbac("ippools", Verb.DELETE, Field.NONE, Target.POOL));

    // IPAMClaims: read, created for a StatefulSet pod of its node, status written; never changed.
    for (Target claim : List.of(Target.OWN_CLAIM, Target.OTHER_CLAIM)) {
      rows.add(read("ipamclaims", claim));
      rows.add(
          node(
              "ipamclaims",
              Verb.CREATE,
              Field.NONE,
              claim,
              claim == Target.OWN_CLAIM ? ALLOWED : REFUSED,
              "a node creates the claim of a StatefulSet pod labelled with its own node"));
      for (Field field : METADATA) {
        rows.add(rbac("ipamclaims", Verb.PATCH, field, claim));
      }
      rows.add(rbac("ipamclaims", Verb.PATCH, Field.SPEC, claim));
      rows.add(documented("ipamclaims/status", Verb.PATCH, Field.STATUS, claim));
      rows.add(rbac("ipamclaims", Verb.DELETE, Field.NONE, claim));
    }

    // Events about an address, its own node's or another's; and a namespace's labels.
    rows.add(documented("events", Verb.CREATE, Field.NONE, Target.OWN_ADDRESS));
    rows.add(documented("events", Verb.CREATE, Field.NONE, Target.OTHER_ADDRESS));
    rows.add(read("namespaces", Target.NAMESPACE));
    return rows;
  }

  /**
   * A write that only a token bound to an existing Node can make: a token without a node name is
   * refused every write (design §7: the policy is keyed on the node name), and a token bound to a
   * deleted Node is no credential at all.
   */
  private static Row node(
      String resource, Verb verb, Field field, Target target, Answer bound, String rule) {
    return new Row(resource, verb, field, target, bound, REFUSED, REFUSED, rule);
  }

  private static Row read(String resource, Target target) {
    Verb verb = resource.equals("ippools") ? Verb.LIST : Verb.GET;
    return new Row(resource, verb, Field.NONE, target, ALLOWED, ALLOWED, REFUSED, READ);
  }

  private static Row rbac(String resource, Verb verb, Field field, Target target) {
    return new Row(resource, verb, field, target, REFUSED, REFUSED, REFUSED, RBAC);
  }

  private static Row documented(String resource, Verb verb, Field field, Target target) {
    return new Row(resource, verb, field, target, ALLOWED, ALLOWED, REFUSED, DOCUMENTED);
  }
}
