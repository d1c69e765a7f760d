package io.kipam.operator.block;

import java.time.Duration;

/** The next step of the release handshake for one block, as {@link ReleasePlanner} decides it. */
sealed interface ReleasePlan {

  /** Nothing to write now; look again after {@code recheck} (zero: only on the next event). */
  record Wait(Duration recheck) implements ReleasePlan {}

  /** Ask the node daemon for the block: write {@code Requested}. */
  record Request(String reason) implements ReleasePlan {}

  /**
   * The round {@code round} ended without a release (the daemon refused, or wrote an answer the
   * operator cannot act on) and its back-off is over: clear the release so the block opens again
   * and a later round may ask.
   */
  record Clear(String round, String refusal) implements ReleasePlan {}

  /**
   * The daemon answered {@code Ready} to {@code round}: check afresh and delete the block (a block
   * being deleted already: check afresh and let it go).
   */
  record Release(String round) implements ReleasePlan {}

  /** The release in the status is not an answer the operator can act on; leave it. */
  record Ignore(String why) implements ReleasePlan {}
}
