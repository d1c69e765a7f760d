package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** How a request of kipam-node's client is named: verb and resource, as kube-apiserver names it. */
class ApiRequestsTest {

  @ParameterizedTest(name = "{0} {1} is {2} {3}")
  @CsvSource({
    "GET, /apis/kipam.io/v1alpha1/ippools?limit=500, list, ippools",
    "GET, /apis/kipam.io/v1alpha1/ippools?resourceVersion=12&watch=true, watch, ippools",
    "GET, /apis/kipam.io/v1alpha1/ipaddresses?labelSelector=kipam.io%2Fnode%3Dn1, list, ipaddresses",
    "POST, /apis/kipam.io/v1alpha1/namespaces/q1/ipaddresses, create, ipaddresses",
    "GET, /apis/kipam.io/v1alpha1/namespaces/q1/ipaddresses/p.10-0-0-1, get, ipaddresses",
    "DELETE, /apis/kipam.io/v1alpha1/namespaces/q1/ipaddresses/p.10-0-0-1, delete, ipaddresses",
    "PATCH, /apis/kipam.io/v1alpha1/ipblocks/p.10-0-0-0-28/status, patch, ipblocks/status",
    "GET, /api/v1/namespaces/q1/pods/web-1, get, pods",
    "GET, /api/v1/pods?fieldSelector=spec.nodeName%3Dn1&watch=1, watch, pods",
    "GET, /api/v1/nodes/n1, get, nodes",
    "GET, /api/v1/namespaces/q1, get, namespaces",
    "GET, /api/v1/namespaces, list, namespaces",
    "POST, /api/v1/namespaces/q1/events, create, events",
  })
  void everyShapeOfRequestGetsItsVerbAndResource(
      String method, String uri, String verb, String resource) {
    assertThat(ApiRequests.kind(method, URI.create("https://10.0.0.1:6443" + uri)))
        .isEqualTo(new ApiRequests.Kind(verb, resource));
  }
}
