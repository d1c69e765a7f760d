package io.kipam.node.kube;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * What kipam-node receives from the API server besides the answers to its writes: the events of its
 * watches, by kind, and the listings of a pool's blocks it makes when short of addresses. A node's
 * share of them must not grow with the number of nodes (design §6); these counters show it.
 */
public final class ApiTraffic {

  private final Counter watchEvents;
  private final Counter listings;
  private final Counter listed;

  public ApiTraffic(PrometheusRegistry registry) {
    watchEvents =
        Counter.builder()
            .name("kipam_node_watch_events_total")
            .help("Events received by kipam-node's watches (adds, updates, deletes), by kind")
            .labelNames("kind")
            .register(registry);
    listings =
        Counter.builder()
            .name("kipam_node_block_listings_total")
            .help(
                "LIST requests (pages) of a pool's IPBlocks, made when what the node knew left an ADD without an address")
            .register(registry);
    listed =
        Counter.builder()
            .name("kipam_node_blocks_listed_total")
            .help("IPBlocks read by those listings")
            .register(registry);
  }

  void watchEvent(String kind) {
    watchEvents.labelValues(kind).inc();
  }

  void listingPage(int blocks) {
    listings.inc();
    listed.inc(blocks);
  }
}
