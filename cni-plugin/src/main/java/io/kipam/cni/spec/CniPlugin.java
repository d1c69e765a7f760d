package io.kipam.cni.spec;

/**
 * What kipam does for each CNI command, given a validated {@link CniRequest}; {@link CniDispatcher}
 * does the wire format around it. A method signals failure by throwing a {@link CniException} with
 * the code the runtime should see; success of DEL, CHECK, GC and STATUS is returning normally.
 * VERSION never reaches a plugin.
 */
public interface CniPlugin {

  /** Allocates (or finds the existing allocation) for the request's attachment. */
  IpamResult add(CniRequest request);

  /** Releases the attachment's allocation; absent is success. */
  void del(CniRequest request);

  /** Confirms the attachment still holds what its prevResult says. */
  void check(CniRequest request);

  /** Releases allocations whose attachments are not in the valid-attachments list. */
  void gc(CniRequest request);

  /** Succeeds when ADD can be served; throws code 50 or 51 otherwise. */
  void status(CniRequest request);

  /**
   * Told about an exception that is not a {@link CniException}, i.e. a bug, before the runtime gets
   * a code 999 answer that does not repeat its message. Override to log it.
   */
  default void onUnexpected(CniCommand command, RuntimeException e) {}
}
