package io.kipam.api.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;
import io.kipam.api.ApiConstants;

/**
 * A slice of an {@link IPPool} leased to one node (cluster-scoped, owned by its pool). Its name is
 * derived from the pool and the block's CIDR, so two nodes claiming the same slice collide on
 * {@code create} and exactly one wins. A slot is Exclusive or Shared ({@code status.mode}); the
 * addresses of a Shared slot are claimed one by one by sub-claims, host-prefix blocks whose {@code
 * spec.parent} names the slot and whose name {@link io.kipam.api.net.ResourceNames#subClaimName}
 * derives from pool and address.
 */
@Group(ApiConstants.GROUP)
@Version(ApiConstants.VERSION)
@Kind("IPBlock")
@Plural("ipblocks")
@Singular("ipblock")
@ShortNames("kipblock")
@Categories("kipam")
@AdditionalPrinterColumn(
    name = "POOL",
    jsonPath = ".spec.pool",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "CIDR",
    jsonPath = ".spec.cidr",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "NODE",
    jsonPath = ".spec.node",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "CLAIM",
    jsonPath = ".spec.claim.name",
    type = AdditionalPrinterColumn.Type.STRING,
    priority = 1)
@AdditionalPrinterColumn(
    name = "MODE",
    jsonPath = ".status.mode",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "ALLOCATED",
    jsonPath = ".status.allocated",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "RELEASE",
    jsonPath = ".status.release.state",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "AGE",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
@ValidationRule(
    value = BlockRules.NODELESS_IS_SHARED,
    message = BlockRules.NODELESS_IS_SHARED_MESSAGE)
@ValidationRule(
    value = BlockRules.SHARED_STAYS_SHARED,
    message = BlockRules.SHARED_STAYS_SHARED_MESSAGE)
@ValidationRule(
    value = BlockRules.SUB_CLAIM_HAS_NO_MODE,
    message = BlockRules.SUB_CLAIM_HAS_NO_MODE_MESSAGE)
@ValidationRule(
    value = BlockRules.SHARE_ONLY_ON_SLOTS,
    message = BlockRules.SHARE_ONLY_ON_SLOTS_MESSAGE)
public class IPBlock extends CustomResource<IPBlockSpec, IPBlockStatus> {

  public static final String KIND = "IPBlock";
}
