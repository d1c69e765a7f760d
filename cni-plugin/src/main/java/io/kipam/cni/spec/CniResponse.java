package io.kipam.cni.spec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * What the {@code kipam} executable writes to stdout and exits with for one call: a result (ADD),
 * an error, the VERSION answer, or nothing (DEL, CHECK, GC and STATUS succeed silently). Exit code
 * 0 means success and 1 an error, whose JSON carries the CNI code; the runtime reads the code from
 * the JSON, not from the exit status.
 */
public final class CniResponse {

  private static final CniResponse EMPTY = new CniResponse(new byte[0], 0);

  private final byte[] stdout;
  private final int exitCode;

  private CniResponse(byte[] stdout, int exitCode) {
    this.stdout = stdout;
    this.exitCode = exitCode;
  }

  /** ADD's answer: {@code result} in the shape of the caller's version. */
  public static CniResponse result(CniVersion version, IpamResult result) {
    return new CniResponse(utf8(result.toJson(version)), 0);
  }

  /** The success of DEL, CHECK, GC and STATUS: no output. */
  public static CniResponse empty() {
    return EMPTY;
  }

  /** VERSION's answer, in {@code version}. */
  public static CniResponse version(CniVersion version) {
    return new CniResponse(utf8(version.versionAnswerJson()), 0);
  }

  /** {@code error} in the version it carries, or the newest if it carries none. */
  public static CniResponse error(CniException error) {
    return error(error.callerVersion().orElse(CniVersion.newest()), error);
  }

  /** {@code error} in {@code version}: {@code {"cniVersion","code","msg","details"}}. */
  public static CniResponse error(CniVersion version, CniException error) {
    ObjectNode json = Json.MAPPER.createObjectNode();
    json.put("cniVersion", version.text());
    json.put("code", error.code().code());
    json.put("msg", error.msg());
    if (!error.details().isEmpty()) {
      json.put("details", error.details());
    }
    return new CniResponse(utf8(Json.write(json)), 1);
  }

  /** The bytes for stdout (a copy). */
  public byte[] stdout() {
    return stdout.clone();
  }

  /** The bytes for stdout as text. */
  public String stdoutText() {
    return new String(stdout, StandardCharsets.UTF_8);
  }

  public int exitCode() {
    return exitCode;
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CniResponse other
        && exitCode == other.exitCode
        && Arrays.equals(stdout, other.stdout);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(stdout) + exitCode;
  }

  @Override
  public String toString() {
    return "exit " + exitCode + ": " + stdoutText();
  }
}
