package io.kipam.cni.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GcValidAttachmentsTest {

  private static final Map<String, String> GC_ENV =
      Map.of("CNI_COMMAND", "GC", "CNI_PATH", "/opt/cni/bin");

  private static NetworkConfig gc(String extra) {
    return Calls.parse(GC_ENV, Calls.config("1.1.0", extra)).config().orElseThrow();
  }

  private static CniException refused(String extra) {
    return catchThrowableOfType(CniException.class, () -> gc(extra));
  }

  @Test
  void readsEveryValidAttachmentInOrder() {
    NetworkConfig config =
        gc(
            "\"cni.dev/valid-attachments\":["
                + "{\"containerID\":\"aaa\",\"ifname\":\"eth0\"},"
                + "{\"containerID\":\"aaa\",\"ifname\":\"net1\"},"
                + "{\"containerID\":\"bbb\",\"ifname\":\"eth0\"}]");
    assertThat(config.validAttachments())
        .contains(
            List.of(
                new Attachment("aaa", "eth0"),
                new Attachment("aaa", "net1"),
                new Attachment("bbb", "eth0")));
  }

  @Test
  void anEmptyListMeansNoAttachmentIsValid() {
    assertThat(gc("\"cni.dev/valid-attachments\":[]").validAttachments()).contains(List.of());
  }

  @Test
  void aMissingListIsAnErrorNotAnEmptyList() {
    CniException e = refused("");
    assertThat(e.code().code()).isEqualTo(7);
    assertThat(e.details()).contains("cni.dev/valid-attachments is required");
  }

  @Test
  void aNullListIsAnErrorNotAnEmptyList() {
    CniException e = refused("\"cni.dev/valid-attachments\":null");
    assertThat(e.details()).contains("cni.dev/valid-attachments is required");
  }

  @Test
  void readsTheDraftKeyWhenTheCurrentOneIsAbsent() {
    assertThat(
            gc("\"cni.dev/attachments\":[{\"containerID\":\"aaa\",\"ifname\":\"eth0\"}]")
                .validAttachments())
        .contains(List.of(new Attachment("aaa", "eth0")));
  }

  @Test
  void prefersTheCurrentKeyWhenLibcniSendsBoth() {
    assertThat(
            gc("\"cni.dev/attachments\":[{\"containerID\":\"old\",\"ifname\":\"eth0\"}],"
                    + "\"cni.dev/valid-attachments\":[{\"containerID\":\"new\",\"ifname\":\"eth0\"}]")
                .validAttachments())
        .contains(List.of(new Attachment("new", "eth0")));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"ifname\":\"eth0\"}                                | [0].containerID is required",
        "{\"containerID\":\"aaa\"}                             | [0].ifname is required",
        "{\"containerID\":\"-aaa\",\"ifname\":\"eth0\"}        | [0].containerID '-aaa' must start",
        "{\"containerID\":\"aaa\",\"ifname\":\"eth0:1\"}       | [0].ifname 'eth0:1' contains",
        "{\"containerID\":\"aaa\",\"ifname\":\"eth01234567890123\"} | [0].ifname 'eth01234567890123' is 17 bytes",
        "{\"containerID\":7,\"ifname\":\"eth0\"}                | [0].containerID must be a string, not a number",
        "\"aaa/eth0\"                                          | [0] must be an object, not a string"
      })
  void oneMalformedEntryFailsTheWholeGcNamingIt(String entry, String expected) {
    CniException e = refused("\"cni.dev/valid-attachments\":[" + entry.strip() + "]");
    assertThat(e.code().code()).isEqualTo(7);
    assertThat(e.details()).contains("cni.dev/valid-attachments" + expected.strip());
  }

  @Test
  void gcIsRefusedBeforeVersion110() {
    CniException e =
        catchThrowableOfType(
            CniException.class,
            () -> Calls.parse(GC_ENV, Calls.config("1.0.0", "\"cni.dev/valid-attachments\":[]")));
    assertThat(e.code().code()).isEqualTo(1);
    assertThat(e.callerVersion()).contains(CniVersion.V1_0_0);
  }

  @Test
  void otherCommandsDoNotReadValidAttachments() {
    NetworkConfig config =
        Calls.parse(Calls.env("ADD"), Calls.config("1.1.0", "\"cni.dev/valid-attachments\":7"))
            .config()
            .orElseThrow();
    assertThat(config.validAttachments()).isEmpty();
  }
}
