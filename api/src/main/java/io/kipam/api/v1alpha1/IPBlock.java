package io.kipam.api.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
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
 * {@code create} and exactly one wins.
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
public class IPBlock extends CustomResource<IPBlockSpec, IPBlockStatus> {

  public static final String KIND = "IPBlock";
}
