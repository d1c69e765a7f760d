package io.kipam.api.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kipam.api.ApiConstants;
import io.kipam.api.install.NodeCredentialsTable.Answer;
import io.kipam.api.install.NodeCredentialsTable.Field;
import io.kipam.api.install.NodeCredentialsTable.Identity;
import io.kipam.api.install.NodeCredentialsTable.Row;
import io.kipam.api.install.NodeCredentialsTable.Target;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.TestBlocks;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.KipamCrds;
import io.kipam.testing.WithControlPlane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Every row of {@link NodeCredentialsTable} sent as each of kipam-node's three tokens against the
 * real control plane with kipam installed from config/default: one bound to the attacking node
 * (with the {@code authentication.kubernetes.io/node-name} extra), one of the same service account
 * without a node name, and one bound to a Node that was deleted after the token was minted
 * (kube-apiserver binds a token only to a Node that exists, so the Node is made, the token minted
 * and the Node deleted). Writes go with {@code dryRun=All}, which runs authorization, schema
 * validation and every admission policy but stores nothing, so each case sees the same objects. The
 * run prints how many cases were tried, allowed and refused, and every case whose answer is not the
 * table's; it fails on any. Which node attacks and the order of the cases are drawn from a seed
 * printed first ({@code -Dkipam.seed=N} replays a run).
 */
@WithControlPlane
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NodeCredentialsTableIT {

  private static final String POOL = "table-" + Long.toString(System.nanoTime() % 100_000, 36);
  private static final String NAMESPACE = POOL + "-ns";
  private static final String CLAIM_SET = "web";

  private final ControlPlane controlPlane = ControlPlane.shared();
  private final KubernetesClient admin = controlPlane.client();
  private final long seed = Long.getLong("kipam.seed", System.nanoTime());
  private final Random random = new Random(seed);
  private final Map<Identity, KubernetesClient> clients = new EnumMap<>(Identity.class);
  private final Map<Target, HasMetadata> objects = new EnumMap<>(Target.class);
  private final Map<Target, HasMetadata> creates = new EnumMap<>(Target.class);
  private String attacker;
  private String victim;
  private String ghost;

  /** One case: a row of the table as one identity. */
  private record Case(Row row, Identity identity) {
    String text() {
      return row.verb()
          + " "
          + row.resource()
          + (row.field() == Field.NONE ? "" : " (" + row.field().text + ")")
          + " on "
          + row.target().text
          + ", token "
          + identity.text;
    }
  }

  @BeforeAll
  void install() {
    NodeAttacks.printSeed("NodeCredentialsTableIT", seed);
    List<String> nodes = new ArrayList<>(List.of(POOL + "-n1", POOL + "-n2"));
    Collections.shuffle(nodes, random);
    attacker = nodes.get(0);
    victim = nodes.get(1);
    ghost = POOL + "-gone";
    System.out.println("attacker " + attacker + ", attacked " + victim + ", deleted " + ghost);
    KipamInstall.applyWith(controlPlane, List.of(attacker, victim, ghost), List.of(NAMESPACE));
    KipamCrds.installIpamClaims(admin);
    KubernetesClient attackerClient = KipamInstall.nodeClient(controlPlane, attacker);
    KubernetesClient victimClient = KipamInstall.nodeClient(controlPlane, victim);
    clients.put(Identity.NODE_BOUND, attackerClient);
    clients.put(
        Identity.NO_NODE_NAME, KipamInstall.serviceAccountClient(controlPlane, "kipam-node"));
    clients.put(Identity.MISSING_NODE, KipamInstall.nodeClient(controlPlane, ghost));
    admin.nodes().withName(ghost).delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> admin.nodes().withName(ghost).get() == null);

    admin.resource(NodeCredentialsObjects.pool(POOL)).create();
    NodeCredentialsObjects shapes = new NodeCredentialsObjects(POOL, NAMESPACE);
    objects.put(
        Target.OWN_SLOT,
        attackerClient.resource(TestBlocks.slot(POOL, "10.48.1.0/28", attacker)).create());
    objects.put(
        Target.OTHER_SLOT,
        victimClient.resource(TestBlocks.protectedSlot(POOL, "10.48.2.0/28", victim)).create());
    IPBlock shared =
        victimClient.resource(TestBlocks.sharedFromBirth(POOL, "10.48.3.0/28", victim)).create();
    NodeAttacks.status(victimClient, shared, "{\"status\":{\"mode\":\"Shared\"}}");
    objects.put(Target.SHARED_SLOT, shared);
    IPBlock converted =
        attackerClient.resource(TestBlocks.protectedSlot(POOL, "10.48.4.0/28", attacker)).create();
    NodeAttacks.status(
        admin,
        converted,
        "{\"status\":{\"share\":{\"requestedAt\":\"2026-11-27T00:00:00Z\",\"reason\":\"test\"}}}");
    NodeAttacks.status(attackerClient, converted, "{\"status\":{\"mode\":\"Shared\"}}");
    objects.put(Target.CONVERTED_SLOT, converted);
    objects.put(
        Target.OWN_CLAIM_SUB_CLAIM,
        attackerClient.resource(shapes.claimSubClaim("10.48.3.2", shared, attacker)).create());
    objects.put(
        Target.OTHER_CLAIM_SUB_CLAIM,
        victimClient.resource(shapes.claimSubClaim("10.48.3.3", shared, victim)).create());
    objects.put(
        Target.OWN_ADDRESS,
        attackerClient.resource(shapes.address("10.48.1.2", attacker, "10.48.1.0/28")).create());
    objects.put(
        Target.OTHER_ADDRESS,
        victimClient.resource(shapes.address("10.48.2.2", victim, "10.48.2.0/28")).create());
    objects.put(Target.POOL, admin.resources(IPPool.class).withName(POOL).get());
    // The StatefulSet that owns the claims, without pods (no kubelet here), so that the garbage
    // collector keeps them.
    String setUid =
        admin
            .resource(
                new io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder()
                    .withNewMetadata()
                    .withName(CLAIM_SET)
                    .withNamespace(NAMESPACE)
                    .endMetadata()
                    .withNewSpec()
                    .withReplicas(0)
                    .withNewSelector()
                    .addToMatchLabels("app", CLAIM_SET)
                    .endSelector()
                    .withNewTemplate()
                    .withNewMetadata()
                    .addToLabels("app", CLAIM_SET)
                    .endMetadata()
                    .withNewSpec()
                    .addNewContainer()
                    .withName("web")
                    .withImage("registry.invalid/web")
                    .endContainer()
                    .endSpec()
                    .endTemplate()
                    .endSpec()
                    .build())
            .serverSideApply()
            .getMetadata()
            .getUid();
    objects.put(
        Target.OWN_CLAIM,
        admin.resource(shapes.statefulSetClaim(CLAIM_SET + "-0", attacker, setUid)).create());
    objects.put(
        Target.OTHER_CLAIM,
        admin.resource(shapes.statefulSetClaim(CLAIM_SET + "-1", victim, setUid)).create());
    objects.put(Target.OWN_NODE, admin.nodes().withName(attacker).get());
    objects.put(Target.OTHER_NODE, admin.nodes().withName(victim).get());
    objects.put(Target.NAMESPACE, admin.namespaces().withName(NAMESPACE).get());

    // What a create sends, for each shape: a new object of it, as its owner would write it.
    creates.put(Target.OWN_SLOT, TestBlocks.slot(POOL, "10.48.1.16/28", attacker));
    creates.put(Target.OTHER_SLOT, TestBlocks.slot(POOL, "10.48.2.16/28", victim));
    creates.put(Target.OWN_CLAIM_SUB_CLAIM, shapes.claimSubClaim("10.48.3.4", shared, attacker));
    creates.put(Target.OTHER_CLAIM_SUB_CLAIM, shapes.claimSubClaim("10.48.3.5", shared, victim));
    creates.put(Target.SHARED_SLOT, TestBlocks.sharedFromBirth(POOL, "10.48.5.0/28", victim));
    creates.put(Target.OWN_ADDRESS, shapes.address("10.48.1.3", attacker, "10.48.1.0/28"));
    creates.put(Target.OTHER_ADDRESS, shapes.address("10.48.2.3", victim, "10.48.2.0/28"));
    creates.put(Target.POOL, NodeCredentialsObjects.pool(POOL + "-new"));
    creates.put(Target.OWN_CLAIM, shapes.statefulSetClaim(CLAIM_SET + "-2", attacker, setUid));
    creates.put(Target.OTHER_CLAIM, shapes.statefulSetClaim(CLAIM_SET + "-3", victim, setUid));
    creates.put(
        Target.OWN_NODE,
        new NodeBuilder().withNewMetadata().withName(POOL + "-new").endMetadata().build());
    creates.put(Target.OTHER_NODE, creates.get(Target.OWN_NODE));

    NodeAttacks.awaitPoliciesRefuse(
        attackerClient,
        attacker,
        TestBlocks.slot(POOL, "10.48.2.32/28", victim),
        shapes.subClaim("10.48.2.9", attacker, (IPBlock) objects.get(Target.OTHER_SLOT)));
  }

  @AfterAll
  void cleanUp() {
    clients.values().forEach(KubernetesClient::close);
    NodeAttacks.removeAll(admin, List.of(NAMESPACE), List.of(POOL));
    admin.resources(IPPool.class).withName(POOL).delete();
    admin.nodes().withName(attacker).delete();
    admin.nodes().withName(victim).delete();
  }

  @Test
  void everyWriteOfTheNodesCredentialsGetsTheTablesAnswer() {
    List<Case> cases = new ArrayList<>();
    for (Row row : NodeCredentialsTable.rows()) {
      for (Identity identity : Identity.values()) {
        cases.add(new Case(row, identity));
      }
    }
    Collections.shuffle(cases, random);
    Map<Answer, Integer> answers = new EnumMap<>(Answer.class);
    Map<String, Integer> documented = new LinkedHashMap<>();
    List<String> mismatches = new ArrayList<>();
    for (Case c : cases) {
      HttpResponse<String> response = send(c);
      int code = response.code();
      Answer answer =
          code / 100 == 2
              ? Answer.ALLOWED
              : code == 401 || code == 403 || code == 422 ? Answer.REFUSED : null;
      if (answer == null || answer != c.row().expected(c.identity())) {
        mismatches.add(
            c.text()
                + ": expected "
                + c.row().expected(c.identity())
                + " ("
                + c.row().rule()
                + "), got HTTP "
                + code
                + " "
                + message(response.body()));
      }
      if (answer != null) {
        answers.merge(answer, 1, Integer::sum);
      }
      if (answer == Answer.ALLOWED && c.row().rule().startsWith("admitted by design")) {
        documented.merge(c.row().verb() + " " + c.row().resource(), 1, Integer::sum);
      }
    }
    System.out.println(
        "NodeCredentialsTableIT: "
            + cases.size()
            + " cases from "
            + NodeCredentialsTable.rows().size()
            + " rows tried, "
            + answers.getOrDefault(Answer.ALLOWED, 0)
            + " allowed, "
            + answers.getOrDefault(Answer.REFUSED, 0)
            + " refused, "
            + mismatches.size()
            + " not as the table says");
    System.out.println("allowed by design, written in docs/security.md: " + documented);
    mismatches.forEach(m -> System.out.println("MISMATCH " + m));
    assertThat(cases).hasSizeGreaterThanOrEqualTo(150);
    assertThat(mismatches).as("cases whose answer is not the table's").isEmpty();
  }

  /** The case's request, sent as its identity; writes with dryRun=All. */
  private HttpResponse<String> send(Case c) {
    Row row = c.row();
    HasMetadata object = objects.get(row.target());
    String collection = collection(row.resource(), object);
    String named = collection + "/" + object.getMetadata().getName();
    String subresource = row.resource().contains("/") ? "/status" : "";
    HttpRequest.Builder request = clients.get(c.identity()).getHttpClient().newHttpRequestBuilder();
    String dryRun = "?dryRun=All";
    switch (row.verb()) {
      case GET -> request.uri(named);
      case LIST -> request.uri(collection);
      case CREATE ->
          request
              .uri(collection + dryRun)
              .post("application/json", Serialization.asJson(create(row)));
      case PATCH ->
          request
              .uri(named + subresource + dryRun)
              .method("PATCH", PatchType.JSON_MERGE.getContentType(), patch(row.field(), object));
      // kube-apiserver reads a DELETE's options from its body when it has one, not from the query.
      case DELETE ->
          request
              .uri(named + dryRun)
              .delete(
                  "application/json",
                  "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"dryRun\":[\"All\"]}");
    }
    request.timeout(30, TimeUnit.SECONDS);
    try {
      return clients
          .get(c.identity())
          .getHttpClient()
          .sendAsync(request.build(), String.class)
          .get(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (Exception e) {
      throw new IllegalStateException("cannot send " + c.text(), e);
    }
  }

  private HasMetadata create(Row row) {
    if (row.resource().equals("events")) {
      IPAddress about = (IPAddress) objects.get(row.target());
      return new EventBuilder()
          .withNewMetadata()
          .withName("table." + UUID.randomUUID())
          .withNamespace(NAMESPACE)
          .endMetadata()
          .withNewInvolvedObject()
          .withApiVersion("kipam.io/v1alpha1")
          .withKind("IPAddress")
          .withNamespace(NAMESPACE)
          .withName(about.getMetadata().getName())
          .withUid(about.getMetadata().getUid())
          .endInvolvedObject()
          .withReason("AttachmentKept")
          .withMessage("table")
          .withType("Normal")
          .build();
    }
    return creates.get(row.target());
  }

  /** The URL of the objects of {@code resource} that {@code object} is one of. */
  private String collection(String resource, HasMetadata object) {
    String kind = resource.split("/")[0];
    String base = admin.getMasterUrl().toString().replaceAll("/$", "");
    String namespace = "/namespaces/" + NAMESPACE;
    return base
        + switch (kind) {
          case "ipblocks", "ippools" -> "/apis/kipam.io/v1alpha1/" + kind;
          case "ipaddresses" -> "/apis/kipam.io/v1alpha1" + namespace + "/ipaddresses";
          case "ipamclaims" -> "/apis/k8s.cni.cncf.io/v1alpha1" + namespace + "/ipamclaims";
          case "events" -> "/api/v1" + namespace + "/events";
          case "nodes", "namespaces" -> "/api/v1/" + kind;
          default -> throw new IllegalArgumentException(resource);
        };
  }

  /** The merge patch that sends {@code field} of {@code object}, changed. */
  private String patch(Field field, HasMetadata object) {
    String kipamFinalizer =
        object instanceof IPBlock
            ? ApiConstants.FINALIZER_BLOCK_PROTECTION
            : object instanceof IPAddress
                ? ApiConstants.FINALIZER_ATTACHMENT
                : "kipam.io/protection";
    List<String> finalizers = new ArrayList<>(object.getMetadata().getFinalizers());
    return switch (field) {
      case LABEL_KIPAM -> metadata("labels", "{\"kipam.io/node\":\"" + victim + "-x\"}");
      case LABEL -> metadata("labels", "{\"example.com/table\":\"x\"}");
      case ANNOTATION -> metadata("annotations", "{\"example.com/table\":\"x\"}");
      case DEMAND -> metadata("annotations", "{\"kipam.io/demand\":\"" + POOL + "\"}");
      case FINALIZER_KIPAM -> {
        if (!finalizers.remove(kipamFinalizer)) {
          finalizers.add(kipamFinalizer);
        }
        yield metadata("finalizers", Serialization.asJson(finalizers));
      }
      case FINALIZER_OTHER -> {
        finalizers.add("example.com/hold");
        yield metadata("finalizers", Serialization.asJson(finalizers));
      }
      case OWNER_REFERENCE ->
          metadata(
              "ownerReferences",
              "[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"table\",\"uid\":\""
                  + UUID.randomUUID()
                  + "\"}]");
      case SPEC ->
          "{\"spec\":"
              + (object instanceof IPBlock
                  ? "{\"cidr\":\"10.48.9.0/28\"}"
                  : object instanceof IPAddress
                      ? "{\"ip\":\"10.48.9.9\"}"
                      : object instanceof IPPool
                          ? "{\"reuseDelaySeconds\":5}"
                          : object instanceof IPAMClaim
                              ? "{\"interface\":\"eth9\"}"
                              : "{\"unschedulable\":true}")
              + "}";
      case STATUS ->
          "{\"status\":"
              + (object instanceof IPBlock
                  ? "{\"allocated\":1}"
                  : object instanceof IPAMClaim
                      ? "{\"ips\":[\"10.48.9.9/32\"]}"
                      : object instanceof IPPool
                          ? "{\"observedGeneration\":1}"
                          : "{\"capacity\":{\"kipam.io/ip\":\"1\"}}")
              + "}";
      case NONE -> throw new IllegalArgumentException("a patch sends a field");
    };
  }

  private static String metadata(String key, String json) {
    return "{\"metadata\":{\"" + key + "\":" + json + "}}";
  }

  /** The status message of an answer, or its body when it has none. */
  private static String message(String body) {
    int at = body == null ? -1 : body.indexOf("\"message\":");
    return at < 0 ? String.valueOf(body) : body.substring(at, Math.min(body.length(), at + 400));
  }
}
