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
 * A range of addresses that platform teams make available to pods (cluster-scoped). Nodes lease
 * {@link IPBlock}s of it and hand out addresses inside them; invalid specs are refused at
 * admission.
 */
@Group(ApiConstants.GROUP)
@Version(ApiConstants.VERSION)
@Kind("IPPool")
@Plural("ippools")
@Singular("ippool")
@ShortNames("kippool")
@Categories("kipam")
@ValidationRule(value = PoolRules.NAME_IS_LABEL, message = PoolRules.NAME_IS_LABEL_MESSAGE)
@AdditionalPrinterColumn(
    name = "CIDR",
    jsonPath = ".spec.cidr",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "NETWORK",
    jsonPath = ".spec.network",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "BLOCK",
    jsonPath = ".spec.blockSize",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "ALLOCATED",
    jsonPath = ".status.allocated",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "AVAILABLE",
    jsonPath = ".status.available",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "READY",
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "AGE",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class IPPool extends CustomResource<IPPoolSpec, IPPoolStatus> {

  public static final String KIND = "IPPool";
}
