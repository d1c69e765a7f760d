package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.node.kube.AttachmentRules.Action;
import io.kipam.node.kube.AttachmentRules.Facts;
import io.kipam.node.kube.AttachmentRules.PodState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every combination of facts, against the rule of design §5b. */
class AttachmentRulesTest {

  @Test
  void anAddressIsFreedOnlyWhenItsObjectIsDeletedAndItsAttachmentIsOver() {
    for (boolean deleting : new boolean[] {false, true}) {
      for (boolean finalized : new boolean[] {false, true}) {
        for (boolean nodeHeld : new boolean[] {false, true}) {
          for (PodState pod : PodState.values()) {
            for (boolean settled : new boolean[] {false, true}) {
              Facts facts = new Facts(deleting, finalized, nodeHeld, pod, settled);
              Action action = AttachmentRules.decide(facts);
              boolean frees =
                  action == Action.END
                      || action == Action.END_IF_POD_GONE
                      || action == Action.RELEASE_IF_POD_GONE
                      || action == Action.RELEASE_FINISHED;
              boolean attachmentMayBeOver =
                  !nodeHeld && (pod == PodState.ABSENT || pod == PodState.FINISHED);
              if (frees) {
                assertThat(attachmentMayBeOver).as("%s -> %s", facts, action).isTrue();
                assertThat(finalized).as("%s -> %s", facts, action).isTrue();
              }
              if (action == Action.RELEASE_FINISHED || action == Action.END) {
                assertThat(pod).as("%s -> %s", facts, action).isEqualTo(PodState.FINISHED);
              }
              if (deleting && finalized && !attachmentMayBeOver) {
                assertThat(action).as("%s", facts).isEqualTo(Action.KEEP);
              }
              if (action == Action.RELEASE_IF_POD_GONE) {
                assertThat(settled).as("%s -> %s", facts, action).isTrue();
                assertThat(deleting).as("%s -> %s", facts, action).isFalse();
              }
            }
          }
        }
      }
    }
  }

  /**
   * Cases where the Pod's state does not matter: a static Pod's address (its mirror Pod may come
   * and go), and an object from before the finalizer, adopted unless it is being deleted.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "the address of a static Pod is kept while its object is deleted, true, true, true, KEEP",
    "nothing is done to the object of a static Pod not being deleted, false, true, true, NOTHING",
    "an object from before the finalizer is adopted, false, false, false, ADOPT",
    "an object being deleted without the finalizer is left alone, true, false, false, NOTHING",
  })
  void whateverThePodDoes(
      String description, boolean deleting, boolean finalized, boolean nodeHeld, Action action) {
    for (PodState pod : PodState.values()) {
      assertThat(AttachmentRules.decide(new Facts(deleting, finalized, nodeHeld, pod, true)))
          .as("%s, pod %s", description, pod)
          .isEqualTo(action);
    }
  }

  /**
   * Single cases of the rule, one row each: deleting, finalized, node-held, pod, settled, and the
   * action they must give.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a deleted object whose Pod is gone is ended only after a fresh read,"
        + " true, true, false, ABSENT, true, END_IF_POD_GONE",
    "a finished Pod releases the address of an object not deleted,"
        + " false, true, false, FINISHED, true, RELEASE_FINISHED",
    "a finished Pod ends its deleted object, true, true, false, FINISHED, true, END",
    "a live Pod keeps its deleted object, true, true, false, LIVE, true, KEEP",
    "a terminating Pod keeps its deleted object, true, true, false, TERMINATING, true, KEEP",
    "the object of a terminating Pod not deleted is left alone,"
        + " false, true, false, TERMINATING, true, NOTHING",
    "the address of a missing Pod is released after a fresh read,"
        + " false, true, false, ABSENT, true, RELEASE_IF_POD_GONE",
    "the address of a missing Pod is not released before it settled,"
        + " false, true, false, ABSENT, false, NOTHING",
    "the address of a missing Pod the node holds is not released,"
        + " false, true, true, ABSENT, true, NOTHING",
  })
  void eachCaseGivesItsAction(
      String description,
      boolean deleting,
      boolean finalized,
      boolean nodeHeld,
      PodState pod,
      boolean settled,
      Action action) {
    assertThat(AttachmentRules.decide(new Facts(deleting, finalized, nodeHeld, pod, settled)))
        .as(description)
        .isEqualTo(action);
  }
}
