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

  @Test
  void aStaticPodsAddressIsKeptWhateverItsMirrorPodDoes() {
    for (PodState pod : PodState.values()) {
      assertThat(AttachmentRules.decide(new Facts(true, true, true, pod, true)))
          .isEqualTo(Action.KEEP);
      assertThat(AttachmentRules.decide(new Facts(false, true, true, pod, true)))
          .isEqualTo(Action.NOTHING);
    }
  }

  @Test
  void aDeletedObjectWhosePodIsGoneIsEndedOnlyAfterAFreshRead() {
    assertThat(AttachmentRules.decide(new Facts(true, true, false, PodState.ABSENT, true)))
        .isEqualTo(Action.END_IF_POD_GONE);
  }

  @Test
  void aFinishedPodEndsItsAttachmentWhetherOrNotItsObjectWasDeleted() {
    assertThat(AttachmentRules.decide(new Facts(false, true, false, PodState.FINISHED, true)))
        .isEqualTo(Action.RELEASE_FINISHED);
    assertThat(AttachmentRules.decide(new Facts(true, true, false, PodState.FINISHED, true)))
        .isEqualTo(Action.END);
  }

  @Test
  void anObjectFromBeforeTheFinalizerIsAdoptedAndOneBeingDeletedWithoutItIsLeftAlone() {
    for (PodState pod : PodState.values()) {
      assertThat(AttachmentRules.decide(new Facts(false, false, false, pod, true)))
          .isEqualTo(Action.ADOPT);
      assertThat(AttachmentRules.decide(new Facts(true, false, false, pod, true)))
          .isEqualTo(Action.NOTHING);
    }
  }

  @Test
  void aLiveOrTerminatingPodKeepsItsDeletedObject() {
    assertThat(AttachmentRules.decide(new Facts(true, true, false, PodState.LIVE, true)))
        .isEqualTo(Action.KEEP);
    assertThat(AttachmentRules.decide(new Facts(true, true, false, PodState.TERMINATING, true)))
        .isEqualTo(Action.KEEP);
    assertThat(AttachmentRules.decide(new Facts(false, true, false, PodState.TERMINATING, true)))
        .isEqualTo(Action.NOTHING);
  }

  @Test
  void anAddressWhosePodIsMissingIsReleasedOnlyOnceSettledAndAfterAFreshRead() {
    assertThat(AttachmentRules.decide(new Facts(false, true, false, PodState.ABSENT, true)))
        .isEqualTo(Action.RELEASE_IF_POD_GONE);
    assertThat(AttachmentRules.decide(new Facts(false, true, false, PodState.ABSENT, false)))
        .isEqualTo(Action.NOTHING);
    assertThat(AttachmentRules.decide(new Facts(false, true, true, PodState.ABSENT, true)))
        .isEqualTo(Action.NOTHING);
  }
}
