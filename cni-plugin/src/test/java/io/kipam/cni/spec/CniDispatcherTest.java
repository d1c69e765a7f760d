package io.kipam.cni.spec;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class CniDispatcherTest {

  private static final IpamResult RESULT =
      IpamResult.of(IpConfig.inPool(IpAddress.parse("10.0.0.5"), Cidr.parse("10.0.0.0/24"), null));

  /** Records which commands reached it and fails with {@link #failure} when set. */
  static final class RecordingPlugin implements CniPlugin {
    final List<CniCommand> calls = new ArrayList<>();
    final List<RuntimeException> unexpected = new ArrayList<>();
    Supplier<RuntimeException> failure;

    private void record(CniRequest request) {
      calls.add(request.command());
      if (failure != null) {
        throw failure.get();
      }
    }

    @Override
    public IpamResult add(CniRequest request) {
      record(request);
      return RESULT;
    }

    @Override
    public void del(CniRequest request) {
      record(request);
    }

    @Override
    public void check(CniRequest request) {
      record(request);
    }

    @Override
    public void gc(CniRequest request) {
      record(request);
    }

    @Override
    public void status(CniRequest request) {
      record(request);
    }

    @Override
    public void onUnexpected(CniCommand command, RuntimeException e) {
      unexpected.add(e);
    }
  }

  private final RecordingPlugin plugin = new RecordingPlugin();

  private CniResponse call(CniCommand command, String version) {
    return CniDispatcher.dispatch(
        Calls.env(command), Calls.bytes(Calls.fullConfig(version)), plugin);
  }

  @Test
  void addAnswersTheResultInTheCallersVersion() {
    CniResponse response = call(CniCommand.ADD, "0.3.1");
    assertThat(response.exitCode()).isZero();
    assertThat(response.stdoutText())
        .isEqualTo(
            "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"4\",\"address\":\"10.0.0.5/24\"}]}");
    assertThat(plugin.calls).containsExactly(CniCommand.ADD);
  }

  @ParameterizedTest
  @EnumSource(
      value = CniCommand.class,
      names = {"DEL", "CHECK", "GC", "STATUS"})
  void commandsWithoutResultSucceedSilently(CniCommand command) {
    CniResponse response = call(command, "1.1.0");
    assertThat(response).isEqualTo(CniResponse.empty());
    assertThat(plugin.calls).containsExactly(command);
  }

  @Test
  void versionIsAnsweredWithoutThePlugin() {
    CniResponse response =
        CniDispatcher.dispatch(
            Map.of("CNI_COMMAND", "VERSION"), Calls.bytes("{\"cniVersion\":\"1.0.0\"}"), plugin);
    assertThat(response).isEqualTo(CniResponse.version(CniVersion.V1_0_0));
    assertThat(plugin.calls).isEmpty();
  }

  @Test
  void anInvalidCallNeverReachesThePlugin() {
    CniResponse response = call(CniCommand.STATUS, "1.0.0");
    assertThat(response.exitCode()).isEqualTo(1);
    assertThat(response.stdoutText()).startsWith("{\"cniVersion\":\"1.0.0\",\"code\":1,");
    assertThat(plugin.calls).isEmpty();
  }

  @Test
  void aPluginErrorIsAnsweredWithItsCodeInTheCallersVersion() {
    plugin.failure =
        () ->
            new CniException(
                CniErrorCode.PLUGIN_NOT_AVAILABLE,
                "kipam-node has not synced",
                "waiting for the IPAddress cache of this node");
    CniResponse response = call(CniCommand.STATUS, "1.1.0");
    Calls.assertFailure(
        response,
        "{\"cniVersion\":\"1.1.0\",\"code\":50,\"msg\":\"kipam-node has not synced\","
            + "\"details\":\"waiting for the IPAddress cache of this node\"}");
  }

  @Test
  void aBugIsCode999WithoutItsMessageAndIsHandedToThePlugin() {
    plugin.failure = () -> new IllegalStateException("raw stdin was {\"token\":\"s3cr3t\"}");
    CniResponse response = call(CniCommand.ADD, "1.0.0");
    Calls.assertFailure(
        response,
        "{\"cniVersion\":\"1.0.0\",\"code\":999,\"msg\":\"internal error in kipam\","
            + "\"details\":\"ADD failed with an unexpected IllegalStateException;"
            + " the kipam-node log has the details\"}");
    assertThat(plugin.unexpected).hasSize(1);
  }
}
