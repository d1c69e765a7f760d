package io.kipam.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;
import java.util.List;

/** DNS settings handed to pods with their address, as in the CNI result's {@code dns}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Dns {

  @Size(max = 8)
  @JsonPropertyDescription("Name server addresses, in order of preference.")
  private List<@Size(max = 45) String> nameservers;

  @Size(max = 253)
  @JsonPropertyDescription("The local domain used for short host name lookups.")
  private String domain;

  @Size(max = 32)
  @JsonPropertyDescription("Search domains, in order.")
  private List<@Size(max = 253) String> search;

  @Size(max = 32)
  @JsonPropertyDescription("Resolver options, e.g. ndots:5.")
  private List<@Size(max = 64) String> options;

  public List<String> getNameservers() {
    return nameservers;
  }

  public void setNameservers(List<String> nameservers) {
    this.nameservers = nameservers;
  }

  public String getDomain() {
    return domain;
  }

  public void setDomain(String domain) {
    this.domain = domain;
  }

  public List<String> getSearch() {
    return search;
  }

  public void setSearch(List<String> search) {
    this.search = search;
  }

  public List<String> getOptions() {
    return options;
  }

  public void setOptions(List<String> options) {
    this.options = options;
  }
}
