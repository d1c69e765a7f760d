package io.kipam.operator.admission;

import java.io.ByteArrayInputStream;
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The admission webhook's serving certificate: a self-signed EC P-256 certificate for the names
 * kube-apiserver dials (the webhook Service's DNS names, or the address of a {@code url}), which is
 * also the CA bundle kube-apiserver trusts. PEM in, PEM out, so it lives in a Secret that every
 * replica of kipam-operator shares.
 */
public record ServingCertificate(String certificatePem, String keyPem) {

  /** How long a new certificate is valid. */
  static final Duration VALIDITY = Duration.ofDays(3650);

  /** A certificate with less than this left is made anew when kipam-operator starts. */
  static final Duration RENEW_BEFORE = Duration.ofDays(30);

  /** A new certificate for {@code hosts} (DNS names or IP addresses), valid from now. */
  public static ServingCertificate generate(List<String> hosts, Instant now) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
      KeyPair keys = generator.generateKeyPair();
      X500Name subject = new X500Name("CN=" + hosts.get(0));
      List<GeneralName> names = new ArrayList<>();
      for (String host : hosts) {
        names.add(
            isAddress(host)
                ? new GeneralName(GeneralName.iPAddress, host)
                : new GeneralName(GeneralName.dNSName, host));
      }
      var builder =
          new JcaX509v3CertificateBuilder(
              subject,
              new BigInteger(127, new SecureRandom()),
              Date.from(now.minus(Duration.ofMinutes(5))),
              Date.from(now.plus(VALIDITY)),
              subject,
              keys.getPublic());
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      builder.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyCertSign));
      builder.addExtension(
          Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
      builder.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(names.toArray(GeneralName[]::new)));
      X509Certificate certificate =
          new JcaX509CertificateConverter()
              .getCertificate(
                  builder.build(
                      new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
      return new ServingCertificate(pem(certificate), pem(keys.getPrivate()));
    } catch (Exception e) {
      throw new IllegalStateException("cannot make the webhook's serving certificate: " + e, e);
    }
  }

  /**
   * Whether this certificate names every one of {@code hosts} and is valid long enough at {@code
   * now}.
   */
  public boolean serves(List<String> hosts, Instant now) {
    try {
      X509Certificate certificate = certificate();
      if (certificate.getNotAfter().toInstant().isBefore(now.plus(RENEW_BEFORE))) {
        return false;
      }
      Set<String> named = new HashSet<>();
      Collection<List<?>> alternatives = certificate.getSubjectAlternativeNames();
      if (alternatives != null) {
        alternatives.forEach(name -> named.add(String.valueOf(name.get(1))));
      }
      for (String host : hosts) {
        if (!named.contains(host)
            && !(isAddress(host) && named.contains(InetAddress.getByName(host).getHostAddress()))) {
          return false;
        }
      }
      privateKey();
      return true;
    } catch (Exception unreadable) {
      return false;
    }
  }

  /** A TLS context that serves this certificate. */
  public SSLContext sslContext() {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      char[] password = new char[0];
      store.setKeyEntry("webhook", privateKey(), password, new X509Certificate[] {certificate()});
      KeyManagerFactory keyManagers =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keyManagers.init(store, password);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keyManagers.getKeyManagers(), null, new SecureRandom());
      return context;
    } catch (Exception e) {
      throw new IllegalStateException("cannot serve the webhook's certificate: " + e, e);
    }
  }

  X509Certificate certificate() throws Exception {
    return (X509Certificate)
        CertificateFactory.getInstance("X.509")
            .generateCertificate(
                new ByteArrayInputStream(certificatePem.getBytes(StandardCharsets.US_ASCII)));
  }

  private PrivateKey privateKey() throws Exception {
    try (PEMParser parser = new PEMParser(new StringReader(keyPem))) {
      Object read = parser.readObject();
      if (!(read instanceof org.bouncycastle.asn1.pkcs.PrivateKeyInfo info)) {
        throw new IllegalArgumentException("not a PKCS#8 private key");
      }
      return KeyFactory.getInstance("EC")
          .generatePrivate(new PKCS8EncodedKeySpec(info.getEncoded()));
    }
  }

  private static String pem(Object object) throws Exception {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      writer.writeObject(
          object instanceof PrivateKey key
              ? new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(key, null).generate()
              : object);
    }
    return out.toString();
  }

  private static boolean isAddress(String host) {
    return host.matches("[0-9.]+") || host.contains(":");
  }
}
