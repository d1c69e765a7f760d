package io.kipam.api.v1alpha1;

/**
 * How the addresses of a slot (an IPBlock at its pool's {@code blockSize}) are handed out. In an
 * {@code Exclusive} slot the node in {@code spec.node} alone allocates, from memory. In a {@code
 * Shared} slot every address is claimed on its own by a sub-claim (a host-prefix IPBlock whose
 * {@code spec.parent} names the slot), by whichever node needs it. A slot only ever moves from
 * Exclusive to Shared; the API server refuses the way back.
 */
public enum BlockMode {
  Exclusive,
  Shared
}
