package io.kipam.api.v1alpha1;

/**
 * Steps of the block release handshake. The operator writes {@code Requested}; the node daemon
 * answers {@code Ready} (the block is empty and it has stopped allocating from it) or {@code
 * Refused} (addresses are still in use). Only a fresh {@code Ready} lets the operator delete it.
 */
public enum ReleaseState {
  Requested,
  Ready,
  Refused
}
