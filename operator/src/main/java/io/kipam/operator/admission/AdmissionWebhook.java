package io.kipam.operator.admission;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponseBuilder;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReview;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionReviewBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kipam's validating admission webhook, served by every replica of kipam-operator (not only the
 * leader): {@code POST /validate} answers AdmissionReviews for creates of IPAddresses and
 * sub-claims made with node-bound tokens ({@link AdmissionRules}), looking blocks up in
 * kipam-operator's one cache of them ({@code cached}, filled by the IPBlock controller's informer;
 * empty until it runs, when a refusal is confirmed by a fresh read anyway). Its serving certificate
 * lives in a Secret that the first replica to start creates; each replica writes the certificate
 * into the {@code caBundle} of the ValidatingWebhookConfiguration that names the webhook, when it
 * differs.
 */
public final class AdmissionWebhook implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(AdmissionWebhook.class);
  static final String NODE_NAME = "authentication.kubernetes.io/node-name";
  private static final KubernetesSerialization JSON = new KubernetesSerialization();

  /**
   * Where and how the webhook is served.
   *
   * @param port the HTTPS port; 0 picks a free one
   * @param namespace where its Secret lives
   * @param secret the Secret of the serving certificate ({@code tls.crt}, {@code tls.key})
   * @param configuration the ValidatingWebhookConfiguration whose {@code caBundle} it keeps
   * @param hosts the names kube-apiserver dials, for the certificate
   */
  public record Settings(
      int port, String namespace, String secret, String configuration, List<String> hosts) {}

  private final HttpsServer server;
  private final ExecutorService executor;
  private final AdmissionRules rules;

  private AdmissionWebhook(HttpsServer server, ExecutorService executor, AdmissionRules rules) {
    this.server = server;
    this.executor = executor;
    this.rules = rules;
  }

  /**
   * Starts the webhook: certificate, CA bundle, then the HTTPS server; {@code cached} looks a block
   * up in the operator's cache.
   */
  public static AdmissionWebhook start(
      KubernetesClient client,
      Settings settings,
      Clock clock,
      Function<String, Optional<IPBlock>> cached)
      throws IOException {
    ServingCertificate certificate = certificate(client, settings, clock);
    publishCaBundle(client, settings, certificate);
    AdmissionRules rules =
        new AdmissionRules(
            new AdmissionRules.Blocks() {
              @Override
              public Optional<IPBlock> cached(String name) {
                return cached.apply(name);
              }

              @Override
              public Optional<IPBlock> fresh(String name) {
                return Optional.ofNullable(client.resources(IPBlock.class).withName(name).get());
              }
            });
    // The JDK's server writes an answer's headers and body apart; without TCP_NODELAY the body
    // waits for the delayed ACK of the headers, some 40 ms a review. Read once, at its first use.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    HttpsServer server = HttpsServer.create(new InetSocketAddress(settings.port()), 0);
    server.setHttpsConfigurator(new HttpsConfigurator(certificate.sslContext()));
    ExecutorService executor = Executors.newFixedThreadPool(4, r -> daemon(r));
    server.setExecutor(executor);
    AdmissionWebhook webhook = new AdmissionWebhook(server, executor, rules);
    server.createContext("/validate", webhook::handle);
    server.start();
    log.info(
        "admission webhook on port {} (certificate for {}, Secret {}/{}, {} {})",
        server.getAddress().getPort(),
        settings.hosts(),
        settings.namespace(),
        settings.secret(),
        "ValidatingWebhookConfiguration",
        settings.configuration());
    return webhook;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** The answer to one AdmissionReview, as JSON; the request's own errors are answered as such. */
  String review(String body) {
    AdmissionReview review = JSON.unmarshal(body, AdmissionReview.class);
    AdmissionRequest request = review.getRequest();
    AdmissionRules.Verdict verdict = verdict(request);
    if (!verdict.allowed()) {
      log.info(
          "refused {} of {}: {}",
          request.getOperation(),
          request.getKind().getKind(),
          verdict.message());
    }
    var response =
        new AdmissionResponseBuilder().withUid(request.getUid()).withAllowed(verdict.allowed());
    if (!verdict.allowed()) {
      response.withStatus(
          new StatusBuilder()
              .withCode(403)
              .withReason("Forbidden")
              .withMessage(verdict.message())
              .build());
    }
    return JSON.asJson(
        new AdmissionReviewBuilder()
            .withApiVersion("admission.k8s.io/v1")
            .withKind("AdmissionReview")
            .withResponse(response.build())
            .build());
  }

  private AdmissionRules.Verdict verdict(AdmissionRequest request) {
    if (!"CREATE".equals(request.getOperation()) || request.getObject() == null) {
      return AdmissionRules.Verdict.ALLOWED;
    }
    String node = node(request.getUserInfo() == null ? null : request.getUserInfo().getExtra());
    Object object = request.getObject();
    return switch (request.getKind().getKind()) {
      case "IPAddress" -> rules.addressCreate(JSON.convertValue(object, IPAddress.class), node);
      case "IPBlock" -> rules.blockCreate(JSON.convertValue(object, IPBlock.class), node);
      default -> AdmissionRules.Verdict.ALLOWED;
    };
  }

  /** The one node a token is bound to; null for none, or for several. */
  static String node(Map<String, List<String>> extra) {
    List<String> names = extra == null ? null : extra.get(NODE_NAME);
    return names != null && names.size() == 1 ? names.get(0) : null;
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] answer;
      int code = 200;
      try (InputStream in = exchange.getRequestBody()) {
        if (!"POST".equals(exchange.getRequestMethod())) {
          code = 405;
          answer = "POST an AdmissionReview\n".getBytes(StandardCharsets.UTF_8);
        } else {
          answer =
              review(new String(in.readAllBytes(), StandardCharsets.UTF_8))
                  .getBytes(StandardCharsets.UTF_8);
        }
      } catch (RuntimeException e) {
        // A lookup that failed: kube-apiserver applies the webhook's failurePolicy.
        log.warn("cannot answer an AdmissionReview: {}", e.toString());
        code = 500;
        answer = ("cannot answer: " + e.getMessage() + "\n").getBytes(StandardCharsets.UTF_8);
      }
      exchange
          .getResponseHeaders()
          .set("Content-Type", code == 200 ? "application/json" : "text/plain");
      exchange.sendResponseHeaders(code, answer.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(answer);
      }
    }
  }

  /** The certificate of the Secret when it serves {@code hosts}; else a new one, written to it. */
  static ServingCertificate certificate(KubernetesClient client, Settings settings, Clock clock) {
    var secrets = client.secrets().inNamespace(settings.namespace());
    for (int attempt = 0; ; attempt++) {
      Secret secret = secrets.withName(settings.secret()).get();
      Optional<ServingCertificate> stored = stored(secret);
      if (stored.isPresent() && stored.get().serves(settings.hosts(), clock.instant())) {
        return stored.get();
      }
      ServingCertificate made = ServingCertificate.generate(settings.hosts(), clock.instant());
      Map<String, String> data =
          Map.of(
              "tls.crt", base64(made.certificatePem()),
              "tls.key", base64(made.keyPem()));
      try {
        if (secret == null) {
          secrets
              .resource(
                  new SecretBuilder()
                      .withNewMetadata()
                      .withName(settings.secret())
                      .withNamespace(settings.namespace())
                      .addToLabels("app.kubernetes.io/name", "kipam")
                      .endMetadata()
                      .withType("kubernetes.io/tls")
                      .withData(data)
                      .build())
              .create();
        } else {
          secret.setData(data);
          secrets.resource(secret).update(); // resourceVersion precondition: one replica wins
        }
        log.info(
            "made the admission webhook's serving certificate, in Secret {}/{}",
            settings.namespace(),
            settings.secret());
        return made;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt >= 3) {
          throw e;
        }
        // Another replica wrote it first: use theirs.
      }
    }
  }

  private static Optional<ServingCertificate> stored(Secret secret) {
    if (secret == null || secret.getData() == null) {
      return Optional.empty();
    }
    String certificate = secret.getData().get("tls.crt");
    String key = secret.getData().get("tls.key");
    if (certificate == null || key == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(new ServingCertificate(text(certificate), text(key)));
    } catch (IllegalArgumentException notBase64) {
      return Optional.empty();
    }
  }

  /** Writes the certificate into every webhook of the configuration whose caBundle differs. */
  static void publishCaBundle(
      KubernetesClient client, Settings settings, ServingCertificate certificate) {
    var resource =
        client
            .admissionRegistration()
            .v1()
            .validatingWebhookConfigurations()
            .withName(settings.configuration());
    ValidatingWebhookConfiguration configuration = resource.get();
    if (configuration == null) {
      log.warn(
          "ValidatingWebhookConfiguration {} does not exist: the webhook serves, but kube-apiserver"
              + " does not call it",
          settings.configuration());
      return;
    }
    String bundle = base64(certificate.certificatePem());
    boolean changed = false;
    for (var webhook : configuration.getWebhooks()) {
      if (!bundle.equals(webhook.getClientConfig().getCaBundle())) {
        webhook.getClientConfig().setCaBundle(bundle);
        changed = true;
      }
    }
    if (changed) {
      resource.patch(configuration);
      log.info(
          "wrote the webhook's CA bundle into ValidatingWebhookConfiguration {}",
          settings.configuration());
    }
  }

  private static String base64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.US_ASCII));
  }

  private static String text(String base64) {
    return new String(Base64.getDecoder().decode(base64), StandardCharsets.US_ASCII);
  }

  private static Thread daemon(Runnable r) {
    Thread t = new Thread(r, "kipam-webhook");
    t.setDaemon(true);
    return t;
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
