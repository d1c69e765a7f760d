package io.kipam.operator.audit;

import io.kipam.api.v1alpha1.IPAddress;

/**
 * One IPAddress object: namespace and name, and the UID that tells it apart from a later object of
 * the same name (an address released and allocated again is another object).
 */
public record AddressObject(String namespace, String name, String uid) {

  public static AddressObject of(IPAddress address) {
    return new AddressObject(
        address.getMetadata().getNamespace(),
        address.getMetadata().getName(),
        address.getMetadata().getUid());
  }

  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
