package io.kipam.cni.spec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kipam.api.net.IpFamily;

/**
 * Writes {@link IpamResult} in the shape of each CNI version. Before 1.0.0 each IP carries {@code
 * "version": "4"|"6"}; from 1.0.0 it does not. Fields are written in the order the specification
 * lists them and empty optional parts ({@code routes}, {@code dns}, a gateway) are left out, so a
 * result has exactly one spelling per version.
 */
final class ResultWriter {

  private ResultWriter() {}

  static ObjectNode render(IpamResult result, CniVersion version) {
    ObjectNode root = Json.MAPPER.createObjectNode();
    root.put("cniVersion", version.text());
    ArrayNode ips = root.putArray("ips");
    for (IpConfig ip : result.ips()) {
      ObjectNode entry = ips.addObject();
      if (version.ipsCarryVersion()) {
        entry.put("version", ip.family() == IpFamily.V4 ? "4" : "6");
      }
      entry.put("address", ip.addressText());
      ip.gateway().ifPresent(gw -> entry.put("gateway", gw.toString()));
    }
    if (!result.routes().isEmpty()) {
      ArrayNode routes = root.putArray("routes");
      for (Route route : result.routes()) {
        ObjectNode entry = routes.addObject();
        entry.put("dst", route.dst().toString());
        route.gw().ifPresent(gw -> entry.put("gw", gw.toString()));
      }
    }
    Dns dns = result.dns();
    if (!dns.isEmpty()) {
      ObjectNode entry = root.putObject("dns");
      if (!dns.nameservers().isEmpty()) {
        ArrayNode servers = entry.putArray("nameservers");
        dns.nameservers().forEach(server -> servers.add(server.toString()));
      }
      dns.domain().ifPresent(domain -> entry.put("domain", domain));
      if (!dns.search().isEmpty()) {
        ArrayNode search = entry.putArray("search");
        dns.search().forEach(search::add);
      }
      if (!dns.options().isEmpty()) {
        ArrayNode options = entry.putArray("options");
        dns.options().forEach(options::add);
      }
    }
    return root;
  }
}
