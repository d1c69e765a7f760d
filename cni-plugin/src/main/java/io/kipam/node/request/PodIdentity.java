package io.kipam.node.request;

import io.kipam.cni.spec.CniEnvironment;
import io.kipam.cni.spec.NetworkConfig;
import io.kipam.node.alloc.Refusal;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The checks an ADD's identity must pass before anything is written: what the API server would
 * refuse in an IPAddress (or a Pod reference) is refused here first, with CNI code 4 naming the
 * variable, so a bad call never claims a block it then cannot use. Every problem is reported at
 * once.
 */
public final class PodIdentity {

  static final int MAX_CONTAINER_ID = 256;
  static final int MAX_NETWORK_NAME = 253;
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
  private static final Pattern UID = Pattern.compile("[0-9A-Za-z-]{1,36}");

  private PodIdentity() {}

  public static void validate(CniEnvironment env, NetworkConfig config) {
    List<String> problems = new ArrayList<>();
    env.containerId()
        .filter(id -> id.length() > MAX_CONTAINER_ID)
        .ifPresent(
            id ->
                problems.add(
                    "CNI_CONTAINERID is "
                        + id.length()
                        + " characters long; kipam records container IDs of at most "
                        + MAX_CONTAINER_ID));
    var args = env.args();
    if (args.podNamespace().isEmpty() || args.podName().isEmpty()) {
      problems.add(
          "CNI_ARGS lacks K8S_POD_NAMESPACE or K8S_POD_NAME; kipam allocates addresses to"
              + " Kubernetes pods, and the runtime (CRI) sets these");
    }
    args.podNamespace()
        .filter(ns -> !DNS_LABEL.matcher(ns).matches())
        .ifPresent(
            ns ->
                problems.add(
                    "K8S_POD_NAMESPACE "
                        + quote(ns)
                        + " is not a valid namespace name (a DNS label of at most 63 characters)"));
    args.podName()
        .filter(name -> !DNS_SUBDOMAIN.matcher(name).matches())
        .ifPresent(
            name ->
                problems.add(
                    "K8S_POD_NAME "
                        + quote(name)
                        + " is not a valid pod name (a DNS subdomain of at most 253 characters)"));
    args.podUid()
        .filter(uid -> !UID.matcher(uid).matches())
        .ifPresent(
            uid ->
                problems.add(
                    "K8S_POD_UID "
                        + quote(uid)
                        + " is not a pod UID (at most 36 letters, digits and dashes)"));
    if (!problems.isEmpty()) {
      throw new Refusal(
          Refusal.Kind.INVALID_ENVIRONMENT, String.join("; ", problems), "nothing was allocated");
    }
    if (config.name().length() > MAX_NETWORK_NAME) {
      throw new Refusal(
          Refusal.Kind.INVALID_CONFIG,
          "name is "
              + config.name().length()
              + " characters long; kipam records network names of at most "
              + MAX_NETWORK_NAME,
          "nothing was allocated");
    }
  }

  private static String quote(String s) {
    String shown = s.length() > 80 ? s.substring(0, 80) + "..." : s;
    return "\"" + shown + "\"";
  }
}
