package io.kipam.node.request;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.IpFamily;
import io.kipam.cni.spec.Attachment;
import io.kipam.cni.spec.CniArgs;
import io.kipam.cni.spec.CniEnvironment;
import io.kipam.cni.spec.NetworkConfig;
import io.kipam.node.alloc.PodRef;
import io.kipam.node.alloc.PoolView;
import io.kipam.node.alloc.Refusal;
import io.kipam.node.kube.NodeWatch;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The addresses an ADD asks for by name (design §5b, static addresses), from one of three places:
 * {@code runtimeConfig.ips} (the CNI {@code ips} capability; Multus passes a network-selection
 * element's {@code "ips"} there), {@code IP=} in CNI_ARGS (comma-separated), or, for the primary
 * network's interface {@code eth0}, the pod's annotation {@code kipam.io/ips} (a JSON list or
 * comma-separated), read from the node's pod watch. Two places asking for different addresses are
 * refused; so is more than one address of a family, and an address of a family the network does not
 * give. Each address may carry a prefix length, which is ignored (the pool's is used).
 */
public final class StaticRequest {

  /** The interface of the primary network, the one {@code kipam.io/ips} is for. */
  static final String PRIMARY_INTERFACE = "eth0";

  private static final ObjectMapper JSON = new ObjectMapper();

  private StaticRequest() {}

  public static List<IpAddress> of(
      NetworkConfig config,
      CniEnvironment environment,
      Attachment attachment,
      NodeWatch.Owner owner,
      List<List<PoolView>> families) {
    PodRef pod = owner.ref();
    List<String> sources = new ArrayList<>();
    Set<IpAddress> asked = null;
    if (!config.ips().isEmpty()) {
      Set<IpAddress> fromConfig = new LinkedHashSet<>();
      config.ips().forEach(r -> fromConfig.add(r.ip()));
      asked = fromConfig;
      sources.add("runtimeConfig.ips " + fromConfig);
    }
    var ipArg = environment.args().get(CniArgs.IP).filter(v -> !v.isBlank());
    if (ipArg.isPresent()) {
      Set<IpAddress> fromArgs = parse(ipArg.get(), "CNI_ARGS IP", Refusal.Kind.INVALID_ENVIRONMENT);
      sources.add("CNI_ARGS IP=" + ipArg.get());
      asked = agree(asked, fromArgs, sources);
    }
    if (PRIMARY_INTERFACE.equals(attachment.ifName())) {
      var annotation = owner.annotation(ApiConstants.ANNOTATION_IPS).filter(v -> !v.isBlank());
      if (annotation.isPresent()) {
        Set<IpAddress> fromPod =
            parse(
                annotation.get(),
                "annotation "
                    + ApiConstants.ANNOTATION_IPS
                    + " of pod "
                    + pod.namespace()
                    + "/"
                    + pod.name(),
                Refusal.Kind.INVALID_CONFIG);
        sources.add("annotation " + ApiConstants.ANNOTATION_IPS + " " + annotation.get());
        asked = agree(asked, fromPod, sources);
      }
    }
    if (asked == null) {
      return List.of();
    }
    Set<IpFamily> served = EnumSet.noneOf(IpFamily.class);
    families.forEach(f -> served.add(f.get(0).layout().family()));
    Set<IpFamily> seen = EnumSet.noneOf(IpFamily.class);
    for (IpAddress ip : asked) {
      if (!seen.add(ip.family())) {
        throw refused(
            sources.get(0)
                + " asks for two "
                + ip.family().displayName()
                + " addresses; an attachment has at most one per family");
      }
      if (!served.contains(ip.family())) {
        throw refused(
            sources.get(0)
                + " asks for "
                + ip.family().displayName()
                + " address "
                + ip
                + ", but network "
                + config.name()
                + " gives no "
                + ip.family().displayName()
                + " address");
      }
    }
    return List.copyOf(asked);
  }

  private static Set<IpAddress> agree(
      Set<IpAddress> before, Set<IpAddress> now, List<String> sources) {
    if (before != null && !before.equals(now)) {
      throw refused(
          "the addresses are asked for in two places that differ: "
              + String.join(" and ", sources));
    }
    return now;
  }

  /** Addresses of a JSON list or comma-separated, each with or without a prefix length. */
  private static Set<IpAddress> parse(String value, String where, Refusal.Kind code) {
    List<String> texts = new ArrayList<>();
    String trimmed = value.trim();
    if (trimmed.startsWith("[")) {
      try {
        for (JsonNode element : JSON.readTree(trimmed)) {
          if (!element.isTextual()) {
            throw bad(where, value, "is not a JSON list of addresses", code);
          }
          texts.add(element.textValue());
        }
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw bad(where, value, "is not a JSON list of addresses", code);
      }
    } else {
      texts.addAll(List.of(trimmed.split(",")));
    }
    Set<IpAddress> ips = new LinkedHashSet<>();
    for (String text : texts) {
      String address = text.trim();
      int slash = address.indexOf('/');
      try {
        ips.add(IpAddress.parse(slash < 0 ? address : address.substring(0, slash)));
      } catch (IllegalArgumentException e) {
        throw bad(where, value, "names '" + text.trim() + "', which is not an IP address", code);
      }
    }
    return ips;
  }

  private static Refusal bad(String where, String value, String what, Refusal.Kind code) {
    return new Refusal(
        code,
        where + " '" + value + "' " + what,
        "write addresses such as 10.244.1.7 or 10.244.1.7,fd00::7; nothing was allocated");
  }

  private static Refusal refused(String message) {
    return new Refusal(Refusal.Kind.INVALID_CONFIG, message + "; nothing was allocated", "");
  }
}
