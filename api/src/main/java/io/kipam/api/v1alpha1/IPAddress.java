package io.kipam.api.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
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
 * One allocation: an address held by one pod attachment, in the pod's namespace and owned by the
 * Pod, so the garbage collector returns the address when the pod goes. Its name is derived from
 * pool and address; a second claim of the same address in the same namespace fails with 409.
 *
 * <p>On Kubernetes 1.33 and later the built-in {@code networking.k8s.io} IPAddress (Service IPs)
 * takes the bare plural: use {@code kubectl get ipaddresses.kipam.io}, or the short name {@code
 * kipaddr}.
 */
@Group(ApiConstants.GROUP)
@Version(ApiConstants.VERSION)
@Kind("IPAddress")
@Plural("ipaddresses")
@Singular("ipaddress")
@ShortNames("kipaddr")
@Categories("kipam")
@AdditionalPrinterColumn(
    name = "IP",
    jsonPath = ".spec.ip",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "POOL",
    jsonPath = ".spec.pool",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "POD",
    jsonPath = ".spec.pod.name",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "CLAIM",
    jsonPath = ".spec.claim",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "NODE",
    jsonPath = ".spec.node",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "INTERFACE",
    jsonPath = ".spec.interface",
    type = AdditionalPrinterColumn.Type.STRING,
    priority = 1)
@AdditionalPrinterColumn(
    name = "NETWORK",
    jsonPath = ".spec.network",
    type = AdditionalPrinterColumn.Type.STRING,
    priority = 1)
@AdditionalPrinterColumn(
    name = "AGE",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class IPAddress extends CustomResource<IPAddressSpec, Void> implements Namespaced {

  public static final String KIND = "IPAddress";
}
