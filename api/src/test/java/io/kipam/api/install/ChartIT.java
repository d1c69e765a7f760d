package io.kipam.api.install;

import static io.kipam.api.install.ChartRender.YAML;
import static io.kipam.api.install.ChartRender.objects;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kipam.testing.ControlPlane;
import io.kipam.testing.ControlPlaneBinaries;
import io.kipam.testing.Helm;
import io.kipam.testing.WithControlPlane;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart charts/kipam, rendered by helm built from its Go module (hack/helm/build.sh): its
 * default render is the same set of objects as config/default, `helm lint --strict` is clean, and
 * each value changes what it says.
 */
@WithControlPlane
class ChartIT {

  private static final Path ROOT = ControlPlaneBinaries.repositoryRoot();
  private static final Path CHART = Helm.chart();

  private final ControlPlane controlPlane = ControlPlane.shared();

  @Test
  void theDefaultRenderIsTheSameSetOfObjectsAsConfigDefault() {
    Map<String, Map<?, ?>> rendered = assertSameObjects("config/default");
    System.out.println(
        "helm template charts/kipam and kubectl kustomize config/default: the same "
            + rendered.size()
            + " objects "
            + rendered.keySet());
  }

  @Test
  void theWebhookRenderIsTheSameSetOfObjectsAsConfigWebhook() {
    Map<String, Map<?, ?>> rendered =
        assertSameObjects(
            "config/webhook",
            "--set",
            "admissionWebhook.enabled=true",
            "--set",
            "operator.replicas=2");
    assertThat(rendered.keySet())
        .contains("ValidatingWebhookConfiguration//kipam-node-admission")
        .doesNotContain(
            "ValidatingAdmissionPolicy//kipam-node-address-block",
            "ValidatingAdmissionPolicy//kipam-node-subclaim-parent");
    System.out.println(
        "helm template --set admissionWebhook.enabled=true,operator.replicas=2 and kubectl"
            + " kustomize config/webhook: the same "
            + rendered.size()
            + " objects");
  }

  /**
   * The chart rendered with {@code settings} and {@code kubectl kustomize} of {@code entryPoint}
   * give the same objects, each the same; the chart's objects.
   */
  private Map<String, Map<?, ?>> assertSameObjects(String entryPoint, String... settings) {
    Map<String, Map<?, ?>> kustomized =
        objects(controlPlane.kubectl("kustomize", ROOT.resolve(entryPoint).toString()));
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "template",
                "kipam",
                CHART.toString(),
                "--include-crds",
                "--kube-version",
                Helm.KUBE_VERSION));
    args.addAll(List.of(settings));
    Map<String, Map<?, ?>> rendered = objects(Helm.run(args.toArray(String[]::new)));

    assertThat(rendered.keySet()).containsExactlyInAnyOrderElementsOf(kustomized.keySet());
    for (String key : kustomized.keySet()) {
      assertThat(rendered.get(key)).as(key).isEqualTo(kustomized.get(key));
    }
    return rendered;
  }

  @Test
  void helmLintIsClean() {
    String lint = Helm.run("lint", "--strict", CHART.toString());
    System.out.println(lint.strip());
    assertThat(lint).contains("0 chart(s) failed");
  }

  @Test
  void eachValueChangesWhatItSays() throws IOException {
    Path values = Files.createTempFile("kipam-values", ".yaml");
    Files.writeString(
        values,
        """
        namespace: {name: net-ipam}
        images:
          operator: {repository: registry.example/kipam-operator, tag: "1.2.3"}
          node: {repository: registry.example/kipam-node, tag: "1.2.3"}
          pullPolicy: Always
        operator:
          replicas: 2
          auditSeconds: 600
          resources: {requests: {cpu: 200m, memory: 300Mi}, limits: {memory: 600Mi}}
        node:
          sharedSlots: false
          probeAddress: 0.0.0.0:9881
          tolerations: [{key: dedicated, operator: Equal, value: net, effect: NoSchedule}]
        cni: {binDir: /usr/libexec/cni, socket: /var/run/kipam-net/kipam.sock, stateDir: /var/lib/kipam-net}
        pools:
          - name: pods-v4
            spec: {cidr: 10.244.0.0/16, blockSize: 26}
        networks:
          - name: storage
            namespace: team-a
            plugin: {type: macvlan, master: eth1, mode: bridge}
            ipam: {pools: [pods-v4], statefulSetClaims: true}
        metrics:
          serviceMonitor: {enabled: true}
          prometheusRule: {enabled: true}
        """);
    Map<String, Map<?, ?>> objects =
        objects(
            Helm.run(
                "template",
                "kipam",
                CHART.toString(),
                "--kube-version",
                Helm.KUBE_VERSION,
                "-f",
                values.toString()));
    String all = YAML.writeValueAsString(objects);

    assertThat(objects)
        .containsKeys(
            "Namespace//net-ipam",
            "IPPool//pods-v4",
            "NetworkAttachmentDefinition/team-a/storage",
            "ServiceMonitor/net-ipam/kipam-operator",
            "ServiceMonitor/net-ipam/kipam-node",
            "PrometheusRule/net-ipam/kipam");
    assertThat(all)
        .doesNotContain("kipam-system")
        .contains("registry.example/kipam-operator:1.2.3", "registry.example/kipam-node:1.2.3")
        .contains("KIPAM_AUDIT_SECONDS", "KIPAM_SHARED_SLOTS", "0.0.0.0:9881")
        .contains("/usr/libexec/cni", "/var/run/kipam-net", "/var/lib/kipam-net");
    String nad = YAML.writeValueAsString(objects.get("NetworkAttachmentDefinition/team-a/storage"));
    Map<?, ?> config =
        new JsonMapper()
            .readValue(
                (String)
                    ((Map<?, ?>)
                            objects.get("NetworkAttachmentDefinition/team-a/storage").get("spec"))
                        .get("config"),
                Map.class);
    assertThat(config.get("allowPersistentIPs")).as(nad).isEqualTo(true);
    @SuppressWarnings("unchecked")
    Map<String, Object> ipam = (Map<String, Object>) config.get("ipam");
    assertThat(ipam)
        .containsEntry("type", "kipam")
        .containsEntry("statefulSetClaims", true)
        .containsEntry("socket", "/var/run/kipam-net/kipam.sock");
    System.out.println("values rendered: " + objects.keySet());
  }

  @Test
  void theProbesAskTheConfiguredAddress() {
    Map<String, String> probeHosts =
        Map.of(
            "127.0.0.1:9880", "127.0.0.1",
            "10.0.0.5:9881", "10.0.0.5",
            "0.0.0.0:9882", "127.0.0.1",
            "[fd00::5]:9883", "fd00::5",
            "[::]:9884", "::1",
            "localhost:9885", "localhost");
    probeHosts.forEach(
        (address, host) -> {
          Map<?, ?> container =
              nodeContainer(ChartRender.render("node: {probeAddress: \"" + address + "\"}"));
          String port = address.substring(address.lastIndexOf(':') + 1);
          for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
            Map<?, ?> httpGet = (Map<?, ?>) ((Map<?, ?>) container.get(probe)).get("httpGet");
            assertThat(httpGet.get("host")).as("%s of %s", probe, address).isEqualTo(host);
            // Numbers come back as their exact decimal values (9880 reads 9.88E+3).
            assertThat(new java.math.BigDecimal(httpGet.get("port").toString()).toPlainString())
                .as("%s of %s", probe, address)
                .isEqualTo(port);
          }
        });
    assertThat(ChartRender.refusal("node: {probeAddress: \"9880\"}"))
        .contains("node.probeAddress=9880: it must be host:port");
    System.out.println("probes ask, by node.probeAddress: " + probeHosts);
  }

  @Test
  void theAddressBlockPolicyIsLeftOutOnlyWhenAsked() {
    List<String> addressBlock =
        List.of(
            "ValidatingAdmissionPolicy//kipam-node-address-block",
            "ValidatingAdmissionPolicyBinding//kipam-node-address-block");
    List<String> subClaim =
        List.of(
            "ValidatingAdmissionPolicy//kipam-node-subclaim-parent",
            "ValidatingAdmissionPolicyBinding//kipam-node-subclaim-parent");
    Map<String, Map<?, ?>> byDefault = ChartRender.render("");
    assertThat(byDefault).containsKeys(addressBlock.toArray(String[]::new));
    assertThat(byDefault).containsKeys(subClaim.toArray(String[]::new));

    Map<String, Map<?, ?>> without = ChartRender.render("admissionPolicies: {addressBlock: false}");
    assertThat(without).doesNotContainKeys(addressBlock.toArray(String[]::new));
    assertThat(without).containsKeys(subClaim.toArray(String[]::new));
    assertThat(without.keySet())
        .containsExactlyInAnyOrderElementsOf(
            byDefault.keySet().stream().filter(k -> !addressBlock.contains(k)).toList());

    Map<String, Map<?, ?>> none = ChartRender.render("admissionPolicies: {enabled: false}");
    assertThat(none.keySet()).noneMatch(k -> k.startsWith("ValidatingAdmissionPolicy"));
    System.out.println(
        "admissionPolicies.addressBlock=false leaves out " + addressBlock + ", nothing else");
  }

  /** kipam-node's container in the DaemonSet of {@code objects}. */
  private static Map<?, ?> nodeContainer(Map<String, Map<?, ?>> objects) {
    Map<?, ?> daemonSet = objects.get("DaemonSet/kipam-system/kipam-node");
    Map<?, ?> pod =
        (Map<?, ?>) ((Map<?, ?>) ((Map<?, ?>) daemonSet.get("spec")).get("template")).get("spec");
    return ((List<?>) pod.get("containers"))
        .stream()
            .map(Map.class::cast)
            .filter(c -> "kipam-node".equals(c.get("name")))
            .findFirst()
            .orElseThrow();
  }
}
