package io.kipam.system.harness;

/** Stops what a test started. */
public final class Close {

  private Close() {}

  /**
   * Closes each of {@code resources} that is not null, in order, also after one of them failed to
   * close; then throws the first failure, with the later ones suppressed.
   */
  public static void all(AutoCloseable... resources) throws Exception {
    Exception failure = null;
    for (AutoCloseable resource : resources) {
      try {
        if (resource != null) {
          resource.close();
        }
      } catch (Exception e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
