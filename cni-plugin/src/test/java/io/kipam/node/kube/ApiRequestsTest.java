package io.kipam.node.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;

/** How a request of kipam-node's client is named: verb and resource, as kube-apiserver names it. */
class ApiRequestsTest {

  private static ApiRequests.Kind kind(String method, String uri) {
    return ApiRequests.kind(method, URI.create("https://10.0.0.1:6443" + uri));
  }

  @Test
  void everyShapeOfRequestGetsItsVerbAndResource() {
    assertThat(kind("GET", "/apis/kipam.io/v1alpha1/ippools?limit=500"))
        .isEqualTo(new ApiRequests.Kind("list", "ippools"));
    assertThat(kind("GET", "/apis/kipam.io/v1alpha1/ippools?resourceVersion=12&watch=true"))
        .isEqualTo(new ApiRequests.Kind("watch", "ippools"));
    assertThat(
            kind("GET", "/apis/kipam.io/v1alpha1/ipaddresses?labelSelector=kipam.io%2Fnode%3Dn1"))
        .isEqualTo(new ApiRequests.Kind("list", "ipaddresses"));
    assertThat(kind("POST", "/apis/kipam.io/v1alpha1/namespaces/q1/ipaddresses"))
        .isEqualTo(new ApiRequests.Kind("create", "ipaddresses"));
    assertThat(kind("GET", "/apis/kipam.io/v1alpha1/namespaces/q1/ipaddresses/p.10-0-0-1"))
        .isEqualTo(new ApiRequests.Kind("get", "ipaddresses"));
    assertThat(kind("DELETE", "/apis/kipam.io/v1alpha1/namespaces/q1/ipaddresses/p.10-0-0-1"))
        .isEqualTo(new ApiRequests.Kind("delete", "ipaddresses"));
    assertThat(kind("PATCH", "/apis/kipam.io/v1alpha1/ipblocks/p.10-0-0-0-28/status"))
        .isEqualTo(new ApiRequests.Kind("patch", "ipblocks/status"));
    assertThat(kind("GET", "/api/v1/namespaces/q1/pods/web-1"))
        .isEqualTo(new ApiRequests.Kind("get", "pods"));
    assertThat(kind("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&watch=1"))
        .isEqualTo(new ApiRequests.Kind("watch", "pods"));
    assertThat(kind("GET", "/api/v1/nodes/n1")).isEqualTo(new ApiRequests.Kind("get", "nodes"));
    assertThat(kind("GET", "/api/v1/namespaces/q1"))
        .isEqualTo(new ApiRequests.Kind("get", "namespaces"));
    assertThat(kind("GET", "/api/v1/namespaces"))
        .isEqualTo(new ApiRequests.Kind("list", "namespaces"));
    assertThat(kind("POST", "/api/v1/namespaces/q1/events"))
        .isEqualTo(new ApiRequests.Kind("create", "events"));
  }
}
