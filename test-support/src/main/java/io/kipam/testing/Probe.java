package io.kipam.testing;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Health probes for components on loopback. The components serve self-signed certificates made at
 * start-up, so probes do not verify them: they only ask "are you up yet" of a process this JVM
 * started on 127.0.0.1.
 */
final class Probe {

  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .sslContext(trustingLoopback())
          // kube-controller-manager answers the JDK client's HTTP/2 with GOAWAY; HTTP/1.1 works.
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();

  private Probe() {}

  /** Polls {@code url} until it answers 200, failing early if the component's process exits. */
  static void awaitOk(ManagedProcess component, URI url, String bearerToken, Duration timeout) {
    HttpRequest.Builder request = HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(5));
    if (bearerToken != null) {
      request.header("Authorization", "Bearer " + bearerToken);
    }
    HttpRequest get = request.build();
    awaitTrue(
        component,
        "answer 200 on " + url,
        timeout,
        () -> {
          try {
            return HTTP.send(get, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
          } catch (IOException e) {
            return false;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
        });
  }

  /** Polls {@code condition} until it holds, failing early if the component's process exits. */
  static void awaitTrue(
      ManagedProcess component, String what, Duration timeout, BooleanSupplier condition) {
    Instant deadline = Instant.now().plus(timeout);
    while (true) {
      if (!component.isAlive()) {
        throw new IllegalStateException(
            component.name()
                + " exited before it would "
                + what
                + "; last lines of its log:\n"
                + component.logTail(30));
      }
      if (condition.getAsBoolean()) {
        return;
      }
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException(
            component.name()
                + " did not "
                + what
                + " within "
                + timeout.toSeconds()
                + "s; last lines of its log:\n"
                + component.logTail(30));
      }
      sleep(Duration.ofMillis(200));
    }
  }

  static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private static SSLContext trustingLoopback() {
    TrustManager acceptAll =
        new X509ExtendedTrustManager() {
          @Override
          public void checkClientTrusted(X509Certificate[] chain, String authType) {}

          @Override
          public void checkServerTrusted(X509Certificate[] chain, String authType) {}

          @Override
          public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

          @Override
          public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

          @Override
          public void checkClientTrusted(
              X509Certificate[] chain, String authType, SSLEngine engine) {}

          @Override
          public void checkServerTrusted(
              X509Certificate[] chain, String authType, SSLEngine engine) {}

          @Override
          public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
          }
        };
    try {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, new TrustManager[] {acceptAll}, null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("no TLS support in this JDK", e);
    }
  }
}
