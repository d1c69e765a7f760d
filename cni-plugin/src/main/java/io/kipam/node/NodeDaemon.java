package io.kipam.node;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kipam.api.ipamclaims.IPAMClaim;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.node.alloc.Allocator;
import io.kipam.node.alloc.BlockStatusReporter;
import io.kipam.node.alloc.Ledger;
import io.kipam.node.alloc.ReleaseResponder;
import io.kipam.node.alloc.SlotConverter;
import io.kipam.node.kube.AddressEvents;
import io.kipam.node.kube.ApiRequests;
import io.kipam.node.kube.ApiTraffic;
import io.kipam.node.kube.AttachmentKeeper;
import io.kipam.node.kube.KubernetesBlockStatus;
import io.kipam.node.kube.KubernetesClaims;
import io.kipam.node.kube.KubernetesStore;
import io.kipam.node.kube.NodeSummary;
import io.kipam.node.kube.NodeWatch;
import io.kipam.node.kube.PodSummary;
import io.kipam.node.kube.PoolDemand;
import io.kipam.node.server.CniEndpoint;
import io.kipam.node.server.NodeServer;
import io.kipam.runtime.client.TokenBucket;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kipam-node: takes the node lock, serves the CNI executable on the node's unix socket, and keeps
 * the node's allocations in sync with the API. It answers calls from the start, but allocates
 * nothing until its watches have listed this node's allocations (until then ADD is "try again
 * later" and /readyz is 503).
 */
public final class NodeDaemon implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(NodeDaemon.class);

  /** How often an object of another node that holds a name this node wanted is read again. */
  private static final Duration FOREIGN = Duration.ofSeconds(10);

  private final NodeSettings settings;
  private NodeLock lock;
  private KubernetesClient client;
  private NodeWatch watch;
  private NodeServer server;
  private Ledger ledger;
  private ReleaseJournal journal;
  private ScheduledExecutorService background;
  private ScheduledExecutorService blocks;
  private volatile boolean rehearsed;

  public NodeDaemon(NodeSettings settings) {
    this.settings = settings;
  }

  public static void main(String[] args) throws Exception {
    NodeSettings settings;
    try {
      settings = NodeSettings.fromEnvironment(System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("kipam-node: " + e.getMessage());
      System.exit(2);
      return;
    }
    NodeDaemon daemon = new NodeDaemon(settings);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  daemon.close();
                  stopped.countDown();
                },
                "kipam-node-stop"));
    daemon.start();
    stopped.await();
  }

  public void start() throws Exception {
    lock = NodeLock.acquire(settings.stateDir().resolve("kipam-node.lock"));
    PrometheusRegistry registry = new PrometheusRegistry();
    ApiRequests requests = new ApiRequests(registry);
    client =
        new KubernetesClientBuilder()
            .withConfig(clientConfig())
            .withKubernetesSerialization(serialization())
            .withHttpClientBuilderConsumer(
                builder -> builder.addOrReplaceInterceptor("kipam-requests", requests))
            .build();
    Clock clock = Clock.systemUTC();
    ledger = new Ledger(settings.node(), clock);
    journal =
        ReleaseJournal.attach(settings.stateDir().resolve("released-addresses"), ledger, clock);
    ApiTraffic traffic = new ApiTraffic(registry);
    watch = new NodeWatch(client, settings.node(), ledger, settings.sharedSlots(), traffic);
    TokenBucket limiter = new TokenBucket(settings.apiQps(), settings.apiBurst());
    KubernetesStore store =
        new KubernetesStore(
            client, settings.node(), watch::poolUid, limiter, watch::selfUid, traffic);
    AddressEvents events = new AddressEvents(client, settings.node(), clock);
    KubernetesClaims claims = new KubernetesClaims(client, store, events);
    KubernetesBlockStatus blockStatus = new KubernetesBlockStatus(client, limiter);
    Allocator allocator =
        new Allocator(
            ledger, store, claims, blockStatus, new SecureRandom(), settings.settleAfter());
    ReleaseResponder responder =
        new ReleaseResponder(ledger, blockStatus, clock, settings.releaseAbandonAfter());
    SlotConverter converter = new SlotConverter(ledger, store, blockStatus);
    BlockStatusReporter reporter =
        new BlockStatusReporter(ledger, blockStatus, clock, settings.blockStatusPeriod());
    PoolDemand demand = new PoolDemand(client, settings.node(), clock, limiter);
    CniService service =
        new CniService(watch, ledger, allocator, this::ready, settings.gcGrace(), demand, claims);
    server = new NodeServer(settings.socket(), measured(service, registry), this::ready, registry);
    settings.probeAddress().ifPresent(server::probesOn);
    server.start();
    background = Executors.newSingleThreadScheduledExecutor(r -> daemonThread(r, "kipam-settle"));
    // Uncertain writes are settled by a fresh read once any write still in flight has landed.
    // Then: objects of other nodes that held a name this node wanted are read again now and then,
    // and each address whose IPAddress was deleted is freed once its attachment is over.
    AttachmentKeeper keeper =
        new AttachmentKeeper(
            watch, ledger, allocator, store, events, clock, settings.orphanGrace());
    background.scheduleWithFixedDelay(
        () -> {
          guarded("settling uncertain writes", () -> allocator.settle(settings.settleAfter()));
          guarded("reading other nodes' objects again", () -> allocator.recheckForeign(FOREIGN));
          guarded("ending attachments", keeper::keep);
        },
        1,
        1,
        TimeUnit.SECONDS);
    // The node's blocks, on a thread of their own so a slow status write never holds up settling:
    // release answers first (an operator waits on them), then blocks going back, then counts.
    blocks = Executors.newSingleThreadScheduledExecutor(r -> daemonThread(r, "kipam-blocks"));
    blocks.scheduleWithFixedDelay(
        () -> {
          guarded("converting slots to Shared", converter::convert);
          guarded("answering release requests", responder::respond);
          guarded("giving back blocks", allocator::returnBlocks);
          guarded("writing block status", reporter::report);
          guarded("recording this node's demand", () -> demand.write(watch.self()));
        },
        1,
        1,
        TimeUnit.SECONDS);
    watch.start(Duration.ofSeconds(15));
    server.rehearsals(service);
    try {
      new Rehearsal(settings.socket(), settings.rehearsalCalls()).run();
    } finally {
      server.rehearsals(null);
    }
    rehearsed = true;
    log.info("kipam-node ready on node {}", settings.node());
  }

  /**
   * Ready (STATUS, /readyz): synced, the call path rehearsed, and every watch running and
   * connected.
   */
  private boolean ready() {
    return rehearsed && ledger.synced() && watch.healthy();
  }

  /** A periodic task that fails must not stop: the executor would never run it again. */
  private static void guarded(String what, Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      log.error("failed {}", what, e);
    }
  }

  private static Thread daemonThread(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /**
   * The client's JSON mapping of the kinds kipam-node reads and writes only: by default the client
   * loads a class of every kind it knows at its first watch event (some 550 classes, about 4 MiB of
   * a daemon's memory, docs/benchmarks.md), to find the class of an object by its kind. {@code
   * Status} is among them: a watch's error event (410 Gone after an API server restart) carries
   * one, and read as anything else the watch would not list again but retry its expired version
   * forever.
   */
  static KubernetesSerialization serialization() {
    KubernetesSerialization serialization = new KubernetesSerialization(new ObjectMapper(), false);
    for (Class<? extends KubernetesResource> kind :
        List.of(
            Status.class,
            PodSummary.class,
            NodeSummary.class,
            Event.class,
            IPPool.class,
            IPBlock.class,
            IPAddress.class,
            IPAMClaim.class)) {
      serialization.registerKubernetesResource(kind);
    }
    return serialization;
  }

  private Config clientConfig() throws Exception {
    Config config =
        settings.kubeconfig().isPresent()
            ? Config.fromKubeconfig(Files.readString(settings.kubeconfig().get()))
            : Config.autoConfigure(null);
    // A CNI call must fail fast when the API is away, so the runtime retries (error 11) rather
    // than wait out long client retries.
    config.setRequestTimeout(10_000);
    config.setConnectionTimeout(5_000);
    // No client-side retries: a create retried after a lost answer would meet its own object (409)
    // and hide that the first attempt's outcome was unknown; the allocator handles that itself.
    config.setRequestRetryBackoffLimit(0);
    // Watches come back quickly after an API server restart (fabric8 backs off exponentially from
    // this interval, up to 32 times it), so readiness is lost for seconds, not half a minute.
    config.setWatchReconnectInterval(250);
    return config;
  }

  private static CniEndpoint measured(CniEndpoint inner, PrometheusRegistry registry) {
    Counter calls =
        Counter.builder()
            .name("kipam_cni_calls_total")
            .help("CNI calls served, by command and exit code")
            .labelNames("command", "exit_code")
            .register(registry);
    Histogram seconds =
        Histogram.builder()
            .name("kipam_cni_call_duration_seconds")
            .help("Time to serve one CNI call, by command")
            .labelNames("command")
            .register(registry);
    return (env, stdin) -> {
      long start = System.nanoTime();
      CniEndpoint.Answer answer = inner.handle(env, stdin);
      String command = String.valueOf(env.get("CNI_COMMAND"));
      calls.labelValues(command, Integer.toString(answer.exitCode())).inc();
      seconds.labelValues(command).observe((System.nanoTime() - start) / 1e9);
      return answer;
    };
  }

  @Override
  public void close() {
    try {
      if (server != null) {
        server.close();
      }
      if (background != null) {
        background.shutdownNow();
      }
      if (blocks != null) {
        blocks.shutdownNow();
      }
      if (watch != null) {
        watch.close();
      }
      if (client != null) {
        client.close();
      }
      if (journal != null) {
        journal.close();
      }
      if (lock != null) {
        lock.close();
      }
    } catch (Exception e) {
      log.warn("error while stopping: {}", e.toString());
    }
  }
}
