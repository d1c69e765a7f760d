package io.kipam.api;

/**
 * Every {@code kipam.io} name of kipam's API surface: group, version, labels, finalizers and the
 * extended resource. Other modules refer to these constants rather than repeating the strings.
 */
public final class ApiConstants {

  public static final String GROUP = "kipam.io";
  public static final String VERSION = "v1alpha1";
  public static final String API_VERSION = GROUP + "/" + VERSION;

  public static final String LABEL_POOL = GROUP + "/pool";
  public static final String LABEL_BLOCK = GROUP + "/block";
  public static final String LABEL_NODE = GROUP + "/node";
  public static final String LABEL_NETWORK = GROUP + "/network";

  /**
   * On a sub-claim: the block label of its slot, so a slot's sub-claims can be selected (the slot's
   * name itself may be too long for a label value).
   */
  public static final String LABEL_PARENT = GROUP + "/parent";

  /**
   * On the sub-claim of a persistent address: the UID of the IPAMClaim that holds it, so a claim's
   * addresses are found with one label-selected read.
   */
  public static final String LABEL_CLAIM = GROUP + "/claim";

  /**
   * On an IPBlock without {@code spec.node} (a slot Shared from birth, an IPAMClaim's sub-claim):
   * the node whose daemon created it. Admission makes it the creating token's node and never lets
   * it change; only that node's daemon (or kipam-operator) may delete the object.
   */
  public static final String LABEL_CREATED_BY = GROUP + "/created-by";

  /**
   * On an IPAMClaim kipam-node made for a StatefulSet's pod (the network's {@code
   * statefulSetClaims} option): the StatefulSet's name. kipam-operator deletes such claims of
   * removed ordinals when the StatefulSet's {@code persistentVolumeClaimRetentionPolicy.whenScaled}
   * is {@code Delete}.
   */
  public static final String LABEL_STATEFUL_SET = GROUP + "/statefulset";

  /**
   * On a Pod or a Namespace: the IPPools its pods' addresses come from, in order of preference (a
   * JSON list or comma-separated names), for the IP families the network configuration asks for.
   * The Pod's annotation wins over its Namespace's, which wins over the network configuration's
   * {@code ipam.pools}; the per-family ones ({@link #ANNOTATION_IPV4_POOLS}, {@link
   * #ANNOTATION_IPV6_POOLS}) win over this one for their family.
   */
  public static final String ANNOTATION_POOLS = GROUP + "/pools";

  /**
   * On a Pod: the addresses its primary-network interface ({@code eth0}) is to have, at most one
   * per IP family (a JSON list or comma-separated), each from a pool the pod may use.
   */
  public static final String ANNOTATION_IPS = GROUP + "/ips";

  public static final String ANNOTATION_IPV4_POOLS = GROUP + "/ipv4-pools";
  public static final String ANNOTATION_IPV6_POOLS = GROUP + "/ipv6-pools";

  public static final String FINALIZER_POOL_PROTECTION = GROUP + "/pool-protection";

  /**
   * Keeps a deleted IPBlock until its holder has answered {@code Ready} (or its Node is gone) and
   * no IPAddress references it: a block removed with live addresses would let another node hand
   * them out again.
   */
  public static final String FINALIZER_BLOCK_PROTECTION = GROUP + "/block-protection";

  /**
   * On every IPAddress kipam-node creates, set in the create itself: the address stays taken until
   * its attachment is over (CNI DEL or GC handled, its pod gone or finished), whoever deleted the
   * object. The holding node's daemon removes it; kipam-operator only for a node without a live
   * daemon (its Node gone past the grace period). See docs/architecture.md.
   */
  public static final String FINALIZER_ATTACHMENT = GROUP + "/attachment";

  /**
   * On a Node, written by that node's kipam-node: the pools whose ADDs found no address this node
   * can reach (see {@link DemandAnnotation}). kipam-operator treats such a node as short of the
   * pool and converts a slot to Shared for it; the daemon withdraws a pool once an ADD of it is
   * served.
   */
  public static final String ANNOTATION_DEMAND = GROUP + "/demand";

  /**
   * The extended resource the operator publishes on each Node: IPs that node can still hand out.
   */
  public static final String EXTENDED_RESOURCE_IP = GROUP + "/ip";

  private ApiConstants() {}
}
