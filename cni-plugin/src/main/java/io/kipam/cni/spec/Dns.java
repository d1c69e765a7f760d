package io.kipam.cni.spec;

import io.kipam.api.net.IpAddress;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code dns} of a result: name servers, local domain, search domains and resolver options, all
 * optional. {@link #NONE} is left out of a rendered result entirely.
 */
public record Dns(
    List<IpAddress> nameservers,
    Optional<String> domain,
    List<String> search,
    List<String> options) {

  public static final Dns NONE = new Dns(List.of(), Optional.empty(), List.of(), List.of());

  public Dns {
    nameservers = List.copyOf(nameservers);
    Objects.requireNonNull(domain, "domain");
    search = List.copyOf(search);
    options = List.copyOf(options);
  }

  public boolean isEmpty() {
    return nameservers.isEmpty() && domain.isEmpty() && search.isEmpty() && options.isEmpty();
  }
}
