package io.kipam.cni.spec;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * What an IPAM plugin answers to ADD: the addresses ({@code ips}), {@code routes} and {@code dns}
 * for one attachment, independent of the CNI version. {@link #toJson} writes it in the shape of a
 * given version; {@link #parse} reads a result of any supported version (a {@code prevResult}) back
 * into the same value, ignoring the {@code interfaces} and interface indexes a main plugin adds.
 */
public record IpamResult(List<IpConfig> ips, List<Route> routes, Dns dns) {

  public IpamResult {
    ips = List.copyOf(ips);
    routes = List.copyOf(routes);
    Objects.requireNonNull(dns, "dns");
  }

  /** A result with addresses only. */
  public static IpamResult of(IpConfig... ips) {
    return new IpamResult(List.of(ips), List.of(), Dns.NONE);
  }

  /** The result as compact JSON in the shape of {@code version}. */
  public String toJson(CniVersion version) {
    return Json.write(ResultWriter.render(this, version));
  }

  /**
   * Reads a result of any supported version.
   *
   * @throws CniException code 6 if {@code json} is not JSON, code 7 naming the JSON path of each
   *     invalid field
   */
  public static IpamResult parse(String json) {
    JsonProblems problems = new JsonProblems();
    IpamResult result =
        ResultReader.parse(
            Json.read(json.getBytes(StandardCharsets.UTF_8), "the result"), "", problems);
    problems.throwIfAny("invalid CNI result");
    return result;
  }
}
