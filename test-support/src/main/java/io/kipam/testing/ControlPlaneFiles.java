package io.kipam.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;

/**
 * The files a fresh control plane needs before it starts: the service-account signing key pair, the
 * static token file that names the test identities, and a kubeconfig for the components and
 * kubectl. Everything is made anew for each control plane and lives in its work directory.
 */
final class ControlPlaneFiles {

  static final String ADMIN_USER = "kipam-test-admin";
  static final String CONTROLLER_MANAGER_USER = "system:kube-controller-manager";
  static final String SCHEDULER_USER = "system:kube-scheduler";

  private final Path dir;
  final String adminToken = randomToken();
  final String controllerManagerToken = randomToken();
  final String schedulerToken = randomToken();

  ControlPlaneFiles(Path dir) {
    this.dir = dir;
  }

  Path pkiDir() {
    return dir.resolve("pki");
  }

  Path serviceAccountKey() {
    return pkiDir().resolve("service-account.key");
  }

  Path serviceAccountPublicKey() {
    return pkiDir().resolve("service-account.pub");
  }

  /** kube-apiserver writes its self-signed serving certificate (and its CA) here. */
  Path apiServerCertificate() {
    return pkiDir().resolve("apiserver.crt");
  }

  /** The CA kubelet trusts for client certificates: it signed only {@link #kubeletClientCert()}. */
  Path kubeletClientCa() {
    return pkiDir().resolve("kubelet-client-ca.crt");
  }

  /** kube-apiserver's client certificate for kubelet (exec, logs, port-forward). */
  Path kubeletClientCert() {
    return pkiDir().resolve("apiserver-kubelet-client.crt");
  }

  Path kubeletClientKey() {
    return pkiDir().resolve("apiserver-kubelet-client.key");
  }

  /**
   * Writes {@link #kubeletClientCa()} and the API server's client certificate it signed, with
   * openssl (the JDK has no public API to issue a certificate). Kept for one day: a test's cluster
   * lives minutes.
   */
  void writeKubeletClientCertificates() {
    Path caKey = pkiDir().resolve("kubelet-client-ca.key");
    Path csr = pkiDir().resolve("apiserver-kubelet-client.csr");
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=kipam-test-kubelet-client-ca",
        "-keyout",
        caKey.toString(),
        "-out",
        kubeletClientCa().toString());
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=kube-apiserver-kubelet-client",
        "-keyout",
        kubeletClientKey().toString(),
        "-out",
        csr.toString());
    openssl(
        "x509",
        "-req",
        "-days",
        "1",
        "-in",
        csr.toString(),
        "-CA",
        kubeletClientCa().toString(),
        "-CAkey",
        caKey.toString(),
        "-CAcreateserial",
        "-out",
        kubeletClientCert().toString());
  }

  private static void openssl(String... args) {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (p.waitFor() != 0) {
        throw new IllegalStateException("openssl " + args[0] + " failed: " + out.strip());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run openssl", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running openssl", e);
    }
  }

  Path tokenFile() {
    return dir.resolve("tokens.csv");
  }

  Path kubeconfig(String user) {
    return dir.resolve("kubeconfig-" + user.replace(':', '-'));
  }

  void writeKeysAndTokens() {
    try {
      Files.createDirectories(pkiDir());
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(2048);
      KeyPair pair = generator.generateKeyPair();
      write(serviceAccountKey(), pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
      write(serviceAccountPublicKey(), pem("PUBLIC KEY", pair.getPublic().getEncoded()));
      // The test identities are members of system:masters: kipam's own components get their
      // least-privilege roles from config/rbac, tested separately with their own identities.
      write(
          tokenFile(),
          String.join(
              "\n",
              tokenLine(adminToken, ADMIN_USER),
              tokenLine(controllerManagerToken, CONTROLLER_MANAGER_USER),
              tokenLine(schedulerToken, SCHEDULER_USER),
              ""));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("no RSA in this JDK", e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create " + pkiDir(), e);
    }
  }

  Path writeKubeconfig(String user, String token, String server) {
    return writeKubeconfig(kubeconfig(user), user, token, server);
  }

  Path writeKubeconfig(Path file, String user, String token, String server) {
    String yaml =
        String.join(
            "\n",
            "apiVersion: v1",
            "kind: Config",
            "clusters:",
            "- name: kipam-test",
            "  cluster:",
            "    server: " + server,
            "    certificate-authority: " + apiServerCertificate(),
            "users:",
            "- name: " + user,
            "  user:",
            "    token: " + token,
            "contexts:",
            "- name: kipam-test",
            "  context:",
            "    cluster: kipam-test",
            "    user: " + user,
            "current-context: kipam-test",
            "");
    write(file, yaml);
    return file;
  }

  private static String tokenLine(String token, String user) {
    return token + "," + user + "," + user + ",\"system:masters\"";
  }

  private static String pem(String type, byte[] der) {
    String body =
        Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }

  private static String randomToken() {
    byte[] bytes = new byte[24];
    new SecureRandom().nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  private static void write(Path file, String content) {
    try {
      Files.writeString(file, content, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }
}
