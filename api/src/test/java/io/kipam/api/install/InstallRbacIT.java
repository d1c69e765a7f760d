package io.kipam.api.install;

import static io.kipam.api.install.KipamInstall.NODE_SA;
import static io.kipam.api.install.KipamInstall.OPERATOR_SA;
import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.testing.ControlPlane;
import io.kipam.testing.WithControlPlane;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The installed roles, as the API server's authorizer reads them: each service account may do
 * exactly what its component does (one question per verb of each rule) and none of a fixed list of
 * things a compromised node or operator must not.
 */
@WithControlPlane
class InstallRbacIT {

  private final ControlPlane controlPlane = ControlPlane.shared();

  @BeforeAll
  static void install(ControlPlane controlPlane) {
    KipamInstall.apply(controlPlane);
    // kubectl auth can-i resolves a resource by discovery: the optional CRD must be served.
    io.kipam.testing.KipamCrds.installIpamClaims(controlPlane.client());
  }

  @ParameterizedTest(name = "{0} may {1} {2} in {3}")
  @MethodSource("allowed")
  void eachComponentMayDoWhatItNeeds(String user, String verb, String resource, String namespace) {
    assertThat(KipamInstall.canI(controlPlane, user, verb, resource, namespace)).isTrue();
  }

  @ParameterizedTest(name = "{0} may not {1} {2} in {3}")
  @MethodSource("denied")
  void nothingElseIsAllowed(String user, String verb, String resource, String namespace) {
    assertThat(KipamInstall.canI(controlPlane, user, verb, resource, namespace)).isFalse();
  }

  static Stream<Arguments> allowed() {
    return Stream.of(
        // kipam-node: config/rbac/node-role.yaml, rule by rule.
        can(NODE_SA, "list", "ippools.kipam.io"),
        can(NODE_SA, "watch", "ippools.kipam.io"),
        can(NODE_SA, "get", "ipblocks.kipam.io"),
        can(NODE_SA, "list", "ipblocks.kipam.io"),
        can(NODE_SA, "watch", "ipblocks.kipam.io"),
        can(NODE_SA, "create", "ipblocks.kipam.io"),
        can(NODE_SA, "patch", "ipblocks.kipam.io"),
        can(NODE_SA, "delete", "ipblocks.kipam.io"),
        can(NODE_SA, "patch", "ipblocks.kipam.io/status"),
        can(NODE_SA, "get", "ipaddresses.kipam.io", "team-a"),
        can(NODE_SA, "list", "ipaddresses.kipam.io"),
        can(NODE_SA, "watch", "ipaddresses.kipam.io"),
        can(NODE_SA, "create", "ipaddresses.kipam.io", "team-a"),
        can(NODE_SA, "delete", "ipaddresses.kipam.io", "team-b"),
        can(NODE_SA, "patch", "ipaddresses.kipam.io", "team-c"),
        can(NODE_SA, "create", "events", "team-a"),
        can(NODE_SA, "get", "nodes"),
        can(NODE_SA, "patch", "nodes"),
        can(NODE_SA, "get", "pods", "team-a"),
        can(NODE_SA, "list", "pods"),
        can(NODE_SA, "watch", "pods"),
        can(NODE_SA, "list", "nodes"),
        can(NODE_SA, "watch", "nodes"),
        can(NODE_SA, "get", "namespaces"),
        can(NODE_SA, "get", "ipamclaims.k8s.cni.cncf.io", "team-a"),
        can(NODE_SA, "create", "ipamclaims.k8s.cni.cncf.io", "team-c"),
        can(NODE_SA, "patch", "ipamclaims.k8s.cni.cncf.io/status", "team-b"),
        // kipam-operator: config/rbac/operator-role.yaml, rule by rule.
        can(OPERATOR_SA, "get", "ippools.kipam.io"),
        can(OPERATOR_SA, "list", "ippools.kipam.io"),
        can(OPERATOR_SA, "watch", "ippools.kipam.io"),
        can(OPERATOR_SA, "patch", "ippools.kipam.io"),
        can(OPERATOR_SA, "patch", "ippools.kipam.io/status"),
        can(OPERATOR_SA, "get", "ipblocks.kipam.io"),
        can(OPERATOR_SA, "list", "ipblocks.kipam.io"),
        can(OPERATOR_SA, "watch", "ipblocks.kipam.io"),
        can(OPERATOR_SA, "delete", "ipblocks.kipam.io"),
        can(OPERATOR_SA, "patch", "ipblocks.kipam.io"),
        can(OPERATOR_SA, "update", "ipblocks.kipam.io/status"),
        can(OPERATOR_SA, "get", "ipaddresses.kipam.io", "team-a"),
        can(OPERATOR_SA, "list", "ipaddresses.kipam.io"),
        can(OPERATOR_SA, "delete", "ipaddresses.kipam.io", "team-b"),
        can(OPERATOR_SA, "patch", "ipaddresses.kipam.io", "team-c"),
        can(OPERATOR_SA, "get", "pods", "team-a"),
        can(OPERATOR_SA, "list", "pods"),
        can(OPERATOR_SA, "list", "ipamclaims.k8s.cni.cncf.io", "team-a"),
        can(OPERATOR_SA, "delete", "ipamclaims.k8s.cni.cncf.io", "team-b"),
        can(OPERATOR_SA, "get", "statefulsets.apps", "team-a"),
        can(OPERATOR_SA, "get", "nodes"),
        can(OPERATOR_SA, "list", "nodes"),
        can(OPERATOR_SA, "watch", "nodes"),
        can(OPERATOR_SA, "patch", "nodes/status"),
        can(OPERATOR_SA, "create", "events", "default"),
        can(OPERATOR_SA, "get", "leases.coordination.k8s.io", "kipam-system"),
        can(OPERATOR_SA, "create", "leases.coordination.k8s.io", "kipam-system"),
        can(OPERATOR_SA, "update", "leases.coordination.k8s.io", "kipam-system"),
        can(OPERATOR_SA, "patch", "leases.coordination.k8s.io", "kipam-system"));
  }

  static Stream<Arguments> denied() {
    Stream.Builder<Arguments> denied = Stream.builder();
    for (String user : new String[] {NODE_SA, OPERATOR_SA}) {
      Stream.of(
              can(user, "get", "secrets", "kipam-system"),
              can(user, "list", "secrets"),
              can(user, "create", "pods", "default"),
              can(user, "create", "pods", "kube-system"),
              can(user, "create", "customresourcedefinitions.apiextensions.k8s.io"),
              can(user, "delete", "customresourcedefinitions.apiextensions.k8s.io"),
              can(user, "create", "validatingwebhookconfigurations.admissionregistration.k8s.io"),
              can(user, "create", "mutatingwebhookconfigurations.admissionregistration.k8s.io"),
              can(user, "delete", "validatingadmissionpolicies.admissionregistration.k8s.io"),
              can(user, "create", "clusterrolebindings.rbac.authorization.k8s.io"),
              can(user, "delete", "nodes"),
              can(user, "*", "ippools.kipam.io"),
              can(user, "*", "ipblocks.kipam.io"),
              can(user, "*", "ipaddresses.kipam.io"),
              can(user, "*", "*"),
              can(user, "deletecollection", "ipaddresses.kipam.io"),
              can(user, "create", "ippools.kipam.io"))
          .forEach(denied::add);
    }
    Stream.of(
            // A node never touches pools but to read them.
            can(NODE_SA, "delete", "ippools.kipam.io"),
            can(NODE_SA, "patch", "ippools.kipam.io"),
            can(NODE_SA, "update", "ippools.kipam.io/status"),
            can(NODE_SA, "update", "ipblocks.kipam.io/status"),
            can(NODE_SA, "update", "ipaddresses.kipam.io", "team-a"),
            can(NODE_SA, "patch", "nodes/status"),
            can(NODE_SA, "delete", "pods", "team-a"),
            can(NODE_SA, "create", "leases.coordination.k8s.io", "kipam-system"),
            // A node reads claims, makes those of StatefulSet pods and writes their status;
            // it never changes or deletes one.
            can(NODE_SA, "delete", "ipamclaims.k8s.cni.cncf.io", "team-a"),
            can(NODE_SA, "update", "ipamclaims.k8s.cni.cncf.io", "team-a"),
            // The operator never claims blocks nor allocates: only daemons do.
            can(OPERATOR_SA, "create", "ipblocks.kipam.io"),
            can(OPERATOR_SA, "create", "ipaddresses.kipam.io", "team-a"),
            can(OPERATOR_SA, "watch", "ipaddresses.kipam.io"),
            // Its one change to an address is a patch (the finalizer): never a whole update.
            can(OPERATOR_SA, "update", "ipaddresses.kipam.io", "team-a"),
            can(OPERATOR_SA, "delete", "ippools.kipam.io"),
            can(OPERATOR_SA, "watch", "pods"),
            can(OPERATOR_SA, "create", "leases.coordination.k8s.io", "default"),
            can(OPERATOR_SA, "create", "ipamclaims.k8s.cni.cncf.io", "team-a"),
            can(OPERATOR_SA, "list", "statefulsets.apps"),
            can(OPERATOR_SA, "patch", "ipamclaims.k8s.cni.cncf.io/status", "team-a"))
        .forEach(denied::add);
    return denied.build();
  }

  /** A cluster-wide question (all namespaces for namespaced resources). */
  private static Arguments can(String user, String verb, String resource) {
    return can(user, verb, resource, null);
  }

  private static Arguments can(String user, String verb, String resource, String namespace) {
    return Arguments.of(user, verb, resource, namespace);
  }
}
