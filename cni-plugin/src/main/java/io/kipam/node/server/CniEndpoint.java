package io.kipam.node.server;

import java.util.Map;

/** What the daemon does with one forwarded CNI call: the exact stdout and exit code to return. */
@FunctionalInterface
public interface CniEndpoint {

  /** The answer to one CNI call. */
  record Answer(int exitCode, byte[] stdout) {}

  Answer handle(Map<String, String> env, byte[] stdin);
}
