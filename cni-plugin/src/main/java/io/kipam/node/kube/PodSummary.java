package io.kipam.node.kube;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A Pod as kipam-node reads it: its metadata, {@code spec.nodeName} and {@code status.phase}; every
 * other field of the API's answer is skipped while it is read. The client's full Pod model would
 * load some 400 classes (containers, volumes, probes, ...) and their JSON mapping into every node's
 * daemon for fields it never reads (docs/benchmarks.md).
 */
@Group("")
@Version("v1")
@Kind("Pod")
@Plural("pods")
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonDeserialize(using = JsonDeserializer.None.class)
public final class PodSummary extends ObjectSummary implements Namespaced {

  private Spec spec;
  private Status status;

  public PodSummary() {
    super("Pod");
  }

  public Spec getSpec() {
    return spec;
  }

  public void setSpec(Spec spec) {
    this.spec = spec;
  }

  public Status getStatus() {
    return status;
  }

  public void setStatus(Status status) {
    this.status = status;
  }

  /** The node the pod is bound to, or null. */
  public String nodeName() {
    return spec == null ? null : spec.getNodeName();
  }

  /** The pod's phase (Pending, Running, Succeeded, Failed), or null. */
  public String phase() {
    return status == null ? null : status.getPhase();
  }

  /** {@code spec}: the node only. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static final class Spec {
    private String nodeName;

    public String getNodeName() {
      return nodeName;
    }

    public void setNodeName(String nodeName) {
      this.nodeName = nodeName;
    }
  }

  /** {@code status}: the phase only. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public static final class Status {
    private String phase;

    public String getPhase() {
      return phase;
    }

    public void setPhase(String phase) {
      this.phase = phase;
    }
  }
}
