package io.kipam.cni.spec;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The CNI_* environment variables of one call, validated as the specification requires for its
 * command. A variable the command does not use is ignored even if malformed, and left out (GC has
 * no CNI_IFNAME); an empty variable counts as unset, as in the reference implementation.
 *
 * <p>{@link #parse} reports every missing or malformed variable in one error (code 4), so a
 * misconfigured runtime is fixed in one round. kipam, being a Kubernetes IPAM, also requires the
 * pod's namespace and name in CNI_ARGS on ADD: without them it cannot own the address by the pod.
 */
public record CniEnvironment(
    CniCommand command,
    Optional<String> containerId,
    Optional<String> netns,
    Optional<String> ifName,
    CniArgs args,
    List<String> path) {

  public static final String COMMAND = "CNI_COMMAND";
  public static final String CONTAINER_ID = "CNI_CONTAINERID";
  public static final String NETNS = "CNI_NETNS";
  public static final String IFNAME = "CNI_IFNAME";
  public static final String ARGS = "CNI_ARGS";
  public static final String PATH = "CNI_PATH";

  private static final String COMMANDS =
      String.join(", ", Arrays.stream(CniCommand.values()).map(Enum::name).toList());

  public CniEnvironment {
    Objects.requireNonNull(command, "command");
    Objects.requireNonNull(containerId, "containerId");
    Objects.requireNonNull(netns, "netns");
    Objects.requireNonNull(ifName, "ifName");
    Objects.requireNonNull(args, "args");
    path = List.copyOf(path);
  }

  /**
   * Reads and validates the variables {@code env} holds for its CNI_COMMAND.
   *
   * @throws CniException code 4 naming every missing or malformed variable
   */
  public static CniEnvironment parse(Map<String, String> env) {
    Check check = new Check(env);
    String commandText = check.value(COMMAND);
    CniCommand command = null;
    if (commandText == null) {
      check.problem(COMMAND, "CNI_COMMAND is not set; set it to one of " + COMMANDS);
    } else {
      command = CniCommand.find(commandText).orElse(null);
      if (command == null) {
        check.problem(
            COMMAND,
            "CNI_COMMAND "
                + Json.quote(commandText)
                + " is not a CNI command; use one of "
                + COMMANDS);
      }
    }
    // With an unknown command, check whatever is set, so its problems are reported too.
    boolean unknown = command == null;
    boolean attachment = unknown || command.needsAttachment();
    Optional<String> containerId =
        check.variable(
            CONTAINER_ID,
            command,
            !unknown && command.needsAttachment(),
            attachment,
            Identifiers::containerIdProblem);
    Optional<String> ifName =
        check.variable(
            IFNAME,
            command,
            !unknown && command.needsAttachment(),
            attachment,
            Identifiers::ifNameProblem);
    Optional<String> netns =
        check.variable(
            NETNS, command, !unknown && command.needsNetns(), attachment, v -> Optional.empty());
    check.variable(PATH, command, !unknown && command.needsPath(), false, v -> Optional.empty());
    CniArgs args = attachment ? check.args(command) : CniArgs.NONE;
    check.throwIfAny();
    return new CniEnvironment(command, containerId, netns, ifName, args, check.path());
  }

  /** The attachment this call is about: present for ADD, DEL and CHECK. */
  public Optional<Attachment> attachment() {
    return containerId.isPresent() && ifName.isPresent()
        ? Optional.of(new Attachment(containerId.get(), ifName.get()))
        : Optional.empty();
  }

  /** Collects the problems of one environment, naming each variable once in the message. */
  private static final class Check {
    private final Map<String, String> env;
    private final Set<String> invalid = new LinkedHashSet<>();
    private final List<String> problems = new ArrayList<>();

    Check(Map<String, String> env) {
      this.env = env;
    }

    String value(String name) {
      String value = env.get(name);
      return value == null || value.isEmpty() ? null : value;
    }

    void problem(String name, String text) {
      invalid.add(name);
      problems.add(text);
    }

    Optional<String> variable(
        String name,
        CniCommand command,
        boolean required,
        boolean checked,
        Function<String, Optional<String>> rule) {
      String value = value(name);
      if (!required && !checked) {
        // Not used by this command: not read, so nothing unvalidated leaks into the request.
        return Optional.empty();
      }
      if (value == null) {
        if (required) {
          problem(name, name + " is not set; the runtime must set it for " + command);
        }
        return Optional.empty();
      }
      rule.apply(value).ifPresent(text -> problem(name, name + " " + text));
      return Optional.of(value);
    }

    CniArgs args(CniCommand command) {
      String text = value(ARGS);
      List<String> argProblems = new ArrayList<>();
      CniArgs args = text == null ? CniArgs.NONE : CniArgs.parse(text, argProblems);
      if (command == CniCommand.ADD) {
        List<String> missing =
            Stream.of(CniArgs.POD_NAMESPACE, CniArgs.POD_NAME)
                .filter(key -> args.get(key).filter(v -> !v.isEmpty()).isEmpty())
                .toList();
        if (!missing.isEmpty()) {
          argProblems.add(
              "CNI_ARGS has no "
                  + String.join(" and no ", missing)
                  + "; kipam allocates for Kubernetes pods and needs the pod's namespace and name");
        }
      }
      args.get(CniArgs.MAC)
          .filter(mac -> MacAddress.normalize(mac).isEmpty())
          .ifPresent(
              mac ->
                  argProblems.add(
                      "CNI_ARGS MAC "
                          + Json.quote(mac)
                          + " is not a MAC address; write six hex octets such as"
                          + " 0a:58:0a:f4:00:05"));
      argProblems.forEach(p -> problem(ARGS, p));
      return args;
    }

    List<String> path() {
      String text = value(PATH);
      if (text == null) {
        return List.of();
      }
      return Arrays.stream(text.split(File.pathSeparator)).filter(p -> !p.isEmpty()).toList();
    }

    void throwIfAny() {
      if (!problems.isEmpty()) {
        throw new CniException(
            CniErrorCode.INVALID_ENVIRONMENT,
            "invalid CNI environment variables: " + String.join(", ", invalid),
            String.join(". ", problems));
      }
    }
  }
}
