package io.kipam.operator.block;

import java.time.Duration;

/** The next step of the release handshake for one block, as {@link ReleasePlanner} decides it. */
sealed interface ReleasePlan {

  /** Nothing to write now; look again after {@code recheck} (zero: only on the next event). */
  record Wait(Duration recheck) implements ReleasePlan {}

  /** Ask the node daemon for the block: write {@code Requested}. */
  record Request(String reason) implements ReleasePlan {}

  /** The daemon refused {@code round} and its back-off is over: clear the release. */
  record Clear(String round, String refusal) implements ReleasePlan {}

  /** The daemon answered {@code Ready} to {@code round}: check afresh and delete the block. */
  record Release(String round) implements ReleasePlan {}

  /** The release in the status is not an answer the operator can act on; leave it. */
  record Ignore(String why) implements ReleasePlan {}
}
