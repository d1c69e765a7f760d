package io.kipam.node.kube;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A Node as kipam-node reads it: its metadata (labels for pools' node selectors, the demand
 * annotation, the UID that owns static pods' addresses). Its status, with every image the node
 * holds, is skipped while it is read; see {@link PodSummary} for why.
 */
@Group("")
@Version("v1")
@Kind("Node")
@Plural("nodes")
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonDeserialize(using = JsonDeserializer.None.class)
public final class NodeSummary extends ObjectSummary {

  public NodeSummary() {
    super("Node");
  }
}
