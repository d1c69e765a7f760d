package io.kipam.node;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.cni.spec.Dns;
import io.kipam.cni.spec.IpConfig;
import io.kipam.cni.spec.IpamResult;
import io.kipam.cni.spec.Route;
import io.kipam.node.alloc.Lease;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The CNI result of an ADD: each address with its pool's prefix length and gateway, and the routes
 * and DNS settings of the pools, in the order of the addresses (the first domain wins).
 */
final class PoolResults {

  private PoolResults() {}

  static IpamResult of(List<Lease> leases, Function<String, IPPool> pools) {
    List<IpConfig> ips = new ArrayList<>();
    List<Route> routes = new ArrayList<>();
    List<IpAddress> nameservers = new ArrayList<>();
    Optional<String> domain = Optional.empty();
    List<String> search = new ArrayList<>();
    List<String> options = new ArrayList<>();
    for (Lease lease : leases) {
      IPPool pool = pools.apply(lease.pool());
      var spec = pool.getSpec();
      IpAddress gateway = spec.getGateway() == null ? null : IpAddress.parse(spec.getGateway());
      ips.add(IpConfig.inPool(lease.ip(), Cidr.parse(spec.getCidr()), gateway));
      if (spec.getRoutes() != null) {
        for (var r : spec.getRoutes()) {
          routes.add(
              new Route(
                  Cidr.parse(r.getDst()), Optional.ofNullable(r.getGw()).map(IpAddress::parse)));
        }
      }
      if (spec.getDns() != null) {
        var dns = spec.getDns();
        if (dns.getNameservers() != null) {
          dns.getNameservers().forEach(n -> nameservers.add(IpAddress.parseLenient(n)));
        }
        if (dns.getDomain() != null && domain.isEmpty()) {
          domain = Optional.of(dns.getDomain());
        }
        if (dns.getSearch() != null) {
          search.addAll(dns.getSearch());
        }
        if (dns.getOptions() != null) {
          options.addAll(dns.getOptions());
        }
      }
    }
    return new IpamResult(ips, routes, new Dns(nameservers, domain, search, options));
  }
}
