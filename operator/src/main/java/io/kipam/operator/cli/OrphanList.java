package io.kipam.operator.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kipam.operator.audit.OrphanReason;
import io.kipam.operator.check.CheckCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The orphans a report of {@code check -o json} names ({@code ReportWriter.json}: an object with
 * {@code pools}, {@code problems} and {@code clean}; each orphan with {@code address}
 * (namespace/name), {@code uid}, {@code ip}, {@code pool}, {@code reason}). Anything else is
 * refused with one line naming the file and what is wrong ({@link Invalid}).
 *
 * @param others problems of other kinds, which release leaves alone
 */
record OrphanList(List<Named> orphans, int others) {

  /**
   * One orphan as the report names it.
   *
   * @param uid empty in a report of a check that did not write UIDs
   */
  record Named(
      String namespace,
      String name,
      Optional<String> uid,
      String ip,
      String pool,
      OrphanReason reason,
      String detail) {

    String address() {
      return namespace + "/" + name;
    }
  }

  /** A report that cannot be used; the message names the file and the problem. */
  static final class Invalid extends Exception {
    Invalid(String message) {
      super(message);
    }
  }

  static OrphanList read(Path file) throws Invalid {
    String text;
    try {
      text = Files.readString(file);
    } catch (NoSuchFileException e) {
      throw new Invalid("cannot read the report " + file + ": no such file");
    } catch (IOException e) {
      throw new Invalid(
          "cannot read the report " + file + ": " + CheckCommand.oneLine(e.toString()));
    }
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(text);
    } catch (JsonProcessingException e) {
      throw new Invalid(
          "the report "
              + file
              + " is not JSON (write it with `kubectl kipam check -o json`): "
              + CheckCommand.oneLine(e.getOriginalMessage()));
    }
    if (root == null
        || !root.isObject()
        || !root.path("problems").isArray()
        || !root.path("pools").isArray()
        || !root.path("clean").isBoolean()) {
      throw new Invalid(
          "the report "
              + file
              + " is not a report of `kubectl kipam check -o json` (it needs \"pools\", \"problems\""
              + " and \"clean\")");
    }
    List<Named> orphans = new ArrayList<>();
    int others = 0;
    int index = 0;
    for (JsonNode problem : root.get("problems")) {
      String where = "the report " + file + ": problems[" + index++ + "]";
      if (!problem.path("kind").isTextual()) {
        throw new Invalid(where + " has no \"kind\"");
      }
      if (!problem.get("kind").asText().equals("orphan")) {
        others++;
        continue;
      }
      String address = text(problem, "address", where);
      int slash = address.indexOf('/');
      if (slash <= 0 || slash == address.length() - 1 || address.indexOf('/', slash + 1) >= 0) {
        throw new Invalid(where + ": \"address\" must be namespace/name, not " + address);
      }
      String reasonLabel = text(problem, "reason", where);
      OrphanReason reason =
          Arrays.stream(OrphanReason.values())
              .filter(r -> r.label().equals(reasonLabel))
              .findFirst()
              .orElseThrow(
                  () ->
                      new Invalid(
                          where + ": \"reason\" must be pod, block or node, not " + reasonLabel));
      Optional<String> uid =
          problem.path("uid").isTextual() && !problem.get("uid").asText().isEmpty()
              ? Optional.of(problem.get("uid").asText())
              : Optional.empty();
      orphans.add(
          new Named(
              address.substring(0, slash),
              address.substring(slash + 1),
              uid,
              problem.path("ip").asText(""),
              problem.path("pool").asText(""),
              reason,
              problem.path("detail").asText("")));
    }
    return new OrphanList(List.copyOf(orphans), others);
  }

  private static String text(JsonNode problem, String field, String where) throws Invalid {
    JsonNode value = problem.get(field);
    if (value == null || !value.isTextual() || value.asText().isBlank()) {
      throw new Invalid(where + " (an orphan) has no \"" + field + "\"");
    }
    return value.asText();
  }
}
