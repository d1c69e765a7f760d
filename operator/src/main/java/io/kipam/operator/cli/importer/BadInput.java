package io.kipam.operator.cli.importer;

/**
 * A whereabouts object the import cannot read or cannot carry over as it is: the object ({@code
 * Kind namespace/name}), the field (a JSON path, e.g. {@code spec.config.ipam.ipRanges[1].range})
 * and why. Reported, never skipped in silence: whatever it concerns is not imported.
 */
public record BadInput(String object, String field, String message) {

  @Override
  public String toString() {
    return object + (field.isEmpty() ? "" : " " + field) + ": " + message;
  }
}
