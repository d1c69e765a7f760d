package io.kipam.cni.spec;

import java.util.Map;
import java.util.Objects;

/**
 * One CNI call from bytes to bytes: the environment and stdin of a call in, the stdout and exit
 * code out, with a {@link CniPlugin} doing the work in between. It has no I/O of its own, so {@code
 * kipam-node} can serve calls forwarded over its socket and tests can drive every path directly.
 * Every failure becomes a CNI error answer in the caller's version; nothing escapes as an
 * exception.
 */
public final class CniDispatcher {

  private CniDispatcher() {}

  public static CniResponse dispatch(Map<String, String> env, byte[] stdin, CniPlugin plugin) {
    Objects.requireNonNull(plugin, "plugin");
    CniRequest request;
    try {
      request = CniRequest.parse(env, stdin);
    } catch (CniException e) {
      return CniResponse.error(e);
    }
    try {
      return switch (request.command()) {
        case VERSION -> CniResponse.version(request.cniVersion());
        case ADD -> {
          IpamResult result = plugin.add(request);
          if (result == null) {
            throw new IllegalStateException("ADD returned no result");
          }
          yield CniResponse.result(request.cniVersion(), result);
        }
        case DEL -> {
          plugin.del(request);
          yield CniResponse.empty();
        }
        case CHECK -> {
          plugin.check(request);
          yield CniResponse.empty();
        }
        case GC -> {
          plugin.gc(request);
          yield CniResponse.empty();
        }
        case STATUS -> {
          plugin.status(request);
          yield CniResponse.empty();
        }
      };
    } catch (CniException e) {
      return CniResponse.error(request.cniVersion(), e);
    } catch (RuntimeException e) {
      plugin.onUnexpected(request.command(), e);
      // The exception's message is not passed on: it was not written for the runtime's eyes.
      return CniResponse.error(
          request.cniVersion(),
          new CniException(
              CniErrorCode.INTERNAL,
              "internal error in kipam",
              request.command()
                  + " failed with an unexpected "
                  + e.getClass().getSimpleName()
                  + "; the kipam-node log has the details"));
    }
  }
}
