package io.kipam.node.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;

/**
 * What every object kipam-node reads as a summary ({@link PodSummary}, {@link NodeSummary}) has:
 * its kind, API version and metadata.
 */
abstract class ObjectSummary implements HasMetadata {

  private String apiVersion = "v1";
  private String kind;
  private ObjectMeta metadata;

  ObjectSummary(String kind) {
    this.kind = kind;
  }

  @Override
  public String getApiVersion() {
    return apiVersion;
  }

  @Override
  public void setApiVersion(String apiVersion) {
    this.apiVersion = apiVersion;
  }

  @Override
  public String getKind() {
    return kind;
  }

  public void setKind(String kind) {
    this.kind = kind;
  }

  @Override
  public ObjectMeta getMetadata() {
    return metadata;
  }

  @Override
  public void setMetadata(ObjectMeta metadata) {
    this.metadata = metadata;
  }
}
