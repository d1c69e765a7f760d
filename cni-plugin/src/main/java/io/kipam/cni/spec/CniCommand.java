package io.kipam.cni.spec;

import java.util.Optional;

/**
 * The CNI commands (CNI_COMMAND), with what each needs from the caller: which environment variables
 * the specification makes required, whether a network configuration is read, and the first
 * specification version that has the command.
 *
 * <p>Required variables follow the specification's per-command lists: ADD and CHECK need the
 * container ID, network namespace and interface name; DEL needs no network namespace (the runtime
 * may call it after the namespace is gone); GC needs CNI_PATH and no container variables; STATUS
 * and VERSION need only CNI_COMMAND.
 */
public enum CniCommand {
  ADD,
  DEL,
  CHECK,
  GC,
  STATUS,
  VERSION;

  /** The command spelled exactly {@code text} (the spec's commands are upper case). */
  public static Optional<CniCommand> find(String text) {
    for (CniCommand command : values()) {
      if (command.name().equals(text)) {
        return Optional.of(command);
      }
    }
    return Optional.empty();
  }

  /** The first supported version that has this command. */
  public CniVersion since() {
    return switch (this) {
      case CHECK -> CniVersion.V0_4_0;
      case GC, STATUS -> CniVersion.V1_1_0;
      default -> CniVersion.V0_3_0;
    };
  }

  /** True if CNI_CONTAINERID and CNI_IFNAME are required: the call is about one attachment. */
  public boolean needsAttachment() {
    return this == ADD || this == DEL || this == CHECK;
  }

  /** True if CNI_NETNS is required. */
  public boolean needsNetns() {
    return this == ADD || this == CHECK;
  }

  /** True if CNI_PATH is required. */
  public boolean needsPath() {
    return this == GC;
  }

  /** True if the command reads a network configuration from stdin (all but VERSION). */
  public boolean readsConfig() {
    return this != VERSION;
  }
}
