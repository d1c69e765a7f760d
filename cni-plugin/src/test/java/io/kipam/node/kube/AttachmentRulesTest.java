package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.node.kube.AttachmentRules.Action;
import io.kipam.node.kube.AttachmentRules.Facts;
import io.kipam.node.kube.AttachmentRules.PodState;
import org.junit.jupiter.api.Test;

/** Every combination of facts, against the rule of design §5b. */
class AttachmentRulesTest {

  @Test
  void anAddressIsFreedOnlyWhenItsObjectIsDeletedAndItsAttachmentIsOver() {
    for (boolean deleting : new boolean[] {false, true}) {
      for (boolean finalized : new boolean[] {false, true}) {
        for (boolean nodeHeld : new boolean[] {false, true}) {
          for (PodState pod : PodState.values()) {
            Facts facts = new Facts(deleting, finalized, nodeHeld, pod);
            Action action = AttachmentRules.decide(facts);
            boolean frees =
                action == Action.END
                    || action == Action.END_IF_POD_GONE
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
          }
        }
      }
    }
  }

  @Test
  void aStaticPodsAddressIsKeptWhateverItsMirrorPodDoes() {
    for (PodState pod : PodState.values()) {
      assertThat(AttachmentRules.decide(new Facts(true, true, true, pod))).isEqualTo(Action.KEEP);
      assertThat(AttachmentRules.decide(new Facts(false, true, true, pod)))
          .isEqualTo(Action.NOTHING);
    }
  }

  @Test
  void aDeletedObjectWhosePodIsGoneIsEndedOnlyAfterAFreshRead() {
    assertThat(AttachmentRules.decide(new Facts(true, true, false, PodState.ABSENT)))
        .isEqualTo(Action.END_IF_POD_GONE);
  }

  @Test
  void aFinishedPodEndsItsAttachmentWhetherOrNotItsObjectWasDeleted() {
    assertThat(AttachmentRules.decide(new Facts(false, true, false, PodState.FINISHED)))
        .isEqualTo(Action.RELEASE_FINISHED);
    assertThat(AttachmentRules.decide(new Facts(true, true, false, PodState.FINISHED)))
        .isEqualTo(Action.END);
  }

  @Test
  void anObjectFromBeforeTheFinalizerIsAdoptedAndOneBeingDeletedWithoutItIsLeftAlone() {
    for (PodState pod : PodState.values()) {
      assertThat(AttachmentRules.decide(new Facts(false, false, false, pod)))
          .isEqualTo(Action.ADOPT);
      assertThat(AttachmentRules.decide(new Facts(true, false, false, pod)))
          .isEqualTo(Action.NOTHING);
    }
  }

  @Test
  void aLiveOrTerminatingPodKeepsItsDeletedObject() {
    assertThat(AttachmentRules.decide(new Facts(true, true, false, PodState.LIVE)))
        .isEqualTo(Action.KEEP);
    assertThat(AttachmentRules.decide(new Facts(true, true, false, PodState.TERMINATING)))
        .isEqualTo(Action.KEEP);
    assertThat(AttachmentRules.decide(new Facts(false, true, false, PodState.TERMINATING)))
        .isEqualTo(Action.NOTHING);
  }
}
