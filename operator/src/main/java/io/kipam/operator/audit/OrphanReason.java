package io.kipam.operator.audit;

/** Why an IPAddress is an orphan; {@link #label} is the metric label and the word in Events. */
public enum OrphanReason {
  /** No Pod of the owner's name exists with the owner's UID. */
  POD("pod", "its Pod %s (uid %s) does not exist"),
  /** The IPBlock named in {@code spec.block} does not exist. */
  BLOCK("block", "its IPBlock %s does not exist"),
  /** The Node named in {@code spec.node} does not exist. */
  NODE("node", "its Node %s does not exist");

  private final String label;
  private final String message;

  OrphanReason(String label, String message) {
    this.label = label;
    this.message = message;
  }

  public String label() {
    return label;
  }

  /** A sentence about the missing object, e.g. "its Node n1 does not exist". */
  public String describe(Object... names) {
    return String.format(message, names);
  }
}
