package io.kipam.api.net;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A pool spec that {@link PoolLayoutBuilder} refused, with every problem found, each naming its
 * field ("spec.exclude[2]") so that a status condition or an admission message points at the line
 * to fix. The message joins them all, so users fix a spec in one round rather than one per error.
 */
public final class InvalidPoolSpecException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  /** One problem: the field path as written in the resource, and what is wrong with it. */
  public record FieldError(String field, String message) {
    @Override
    public String toString() {
      return field + ": " + message;
    }
  }

  private final transient List<FieldError> errors;

  InvalidPoolSpecException(List<FieldError> errors) {
    super(errors.stream().map(FieldError::toString).collect(Collectors.joining("; ")));
    this.errors = List.copyOf(errors);
  }

  /** The problems, in field order; never empty. */
  public List<FieldError> errors() {
    return errors;
  }
}
