package io.kipam.node.alloc;

/**
 * The answer this node owes to a release request of one of its blocks: how many addresses of the
 * block are in use, and how many rest after their release (for the pool's reuse delay). Ready when
 * neither; waiting (no answer yet) when only some rest; refused while any is in use.
 */
public record ReleaseDecision(BlockObject block, int inUse, int resting) {
  public boolean ready() {
    return inUse == 0 && resting == 0;
  }

  /**
   * Nothing is in use but some address still rests: no answer yet. The block stays closed and is
   * answered Ready once its addresses have rested, so the reuse delay holds across a move of the
   * block to another node.
   */
  public boolean waiting() {
    return inUse == 0 && resting > 0;
  }
}
