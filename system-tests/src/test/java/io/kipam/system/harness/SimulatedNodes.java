package io.kipam.system.harness;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kipam.api.ApiConstants;
import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import io.kipam.api.net.PoolLayout;
import io.kipam.api.net.ResourceNames;
import io.kipam.api.v1alpha1.IPAddress;
import io.kipam.api.v1alpha1.IPBlock;
import io.kipam.api.v1alpha1.IPBlockSpec;
import io.kipam.api.v1alpha1.IPPool;
import io.kipam.api.v1alpha1.PodReference;
import io.kipam.testing.Fixtures;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Nodes without a kipam-node process, whose objects are written the way kipam-node writes them: a
 * Node object; one Exclusive slot of the pool claimed by {@code create} (labels, finalizer and
 * owner as kipam-node sets them); an IPAddress created per ADD and deleted per DEL in one of
 * several namespaces; and the slot's {@code status.allocated} written at most once every {@link
 * #STATUS_PERIOD_SECONDS} per slot, as kipam-node coalesces it. For scale benchmarks: thousands of
 * such nodes cost the test JVM a few threads, not a JVM each.
 *
 * <p>The IPAddresses carry no owner reference (there is no Pod to own them), so a run with
 * kipam-operator's audit on would report the addresses of a Node that is gone as orphans of their
 * Pod: {@link #vanish} counts on it. {@link #withAttachments} gives them the finalizer {@code
 * kipam.io/attachment} as kipam-node writes them, and a DEL then also removes it (two writes), as
 * kipam-node's does.
 */
public final class SimulatedNodes implements AutoCloseable {

  /** kipam-node's default {@code KIPAM_BLOCK_STATUS_SECONDS}. */
  public static final int STATUS_PERIOD_SECONDS = 2;

  /** One simulated node: its slot and the addresses it holds, oldest first. */
  private static final class Sim {
    final String node;
    final Cidr slot;
    final Deque<IpAddress> held = new ArrayDeque<>();
    Iterator<IpAddress> next;
    long written = -1;
    long lastWriteNanos;
    boolean writing;
    boolean gone;

    Sim(String node, Cidr slot) {
      this.node = node;
      this.slot = slot;
    }
  }

  private final KubernetesClient client;
  private final String pool;
  private final String poolUid;
  private final PoolLayout layout;
  private final List<String> namespaces;
  private final Random random;
  private final List<Sim> sims = new ArrayList<>();
  private final Iterator<Cidr> slots;
  private static final int STATUS_WRITERS = 64;

  private final ExecutorService statusWriters = Executors.newFixedThreadPool(STATUS_WRITERS);
  private final ScheduledExecutorService statusWriter =
      Executors.newSingleThreadScheduledExecutor();
  private final AtomicLong writes = new AtomicLong();
  private final AtomicLong live = new AtomicLong();
  private final java.util.concurrent.atomic.AtomicInteger named =
      new java.util.concurrent.atomic.AtomicInteger();
  private volatile boolean attachments;

  public SimulatedNodes(KubernetesClient client, String pool, List<String> namespaces, long seed) {
    this.client = client;
    this.pool = pool;
    IPPool object = client.resources(IPPool.class).withName(pool).get();
    this.poolUid = object.getMetadata().getUid();
    this.layout =
        PoolLayout.builder()
            .cidr(object.getSpec().getCidr())
            .blockSize(object.getSpec().getBlockSize())
            .build();
    this.namespaces = namespaces;
    this.random = new Random(seed);
    this.slots = layout.usableBlocks().iterator();
    statusWriter.scheduleAtFixedRate(this::writeStatus, 1, 1, TimeUnit.SECONDS);
  }

  public int size() {
    synchronized (sims) {
      return sims.size();
    }
  }

  /** The simulated nodes' names, as they are now. */
  public List<String> nodes() {
    synchronized (sims) {
      return sims.stream().map(sim -> sim.node).toList();
    }
  }

  /**
   * From now on, IPAddresses are born with {@code kipam.io/attachment} and a DEL removes it after
   * the delete, as kipam-node does.
   */
  public SimulatedNodes withAttachments() {
    attachments = true;
    return this;
  }

  /** The IPAddresses the simulated nodes hold now: the truth a pool's status should follow. */
  public long live() {
    return live.get();
  }

  /** API writes the simulated nodes made so far. */
  public long writes() {
    return writes.get();
  }

  /**
   * Adds simulated nodes until there are {@code total}, each registered and holding one slot
   * (claimed in address order, skipping slots another node won), {@code threads} at a time.
   */
  public void growTo(int total, int threads) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Sim>> added = new ArrayList<>();
      for (int i = size(); i < total; i++) {
        String node = String.format("sim-%05d", named.getAndIncrement());
        added.add(pool.submit(() -> register(node)));
      }
      for (Future<Sim> f : added) {
        synchronized (sims) {
          sims.add(f.get());
        }
      }
    } finally {
      pool.shutdown();
    }
  }

  private Sim register(String node) {
    // The Node object alone: no kubelet heartbeats, no Ready condition (kipam reads neither), and
    // no further write that would race kipam-operator's kipam.io/ip on it.
    client.nodes().resource(Fixtures.bareNode(node)).create();
    writes.incrementAndGet();
    while (true) {
      Cidr slot;
      synchronized (slots) {
        slot = slots.next();
      }
      if (claim(node, slot)) {
        Sim sim = new Sim(node, slot);
        sim.next = layout.assignable(slot).iterator();
        return sim;
      }
    }
  }

  private boolean claim(String node, Cidr slot) {
    IPBlock block = new IPBlock();
    block.setMetadata(
        new ObjectMetaBuilder()
            .withName(ResourceNames.blockName(pool, slot))
            .withLabels(
                Map.of(
                    ApiConstants.LABEL_POOL, pool,
                    ApiConstants.LABEL_NODE, node,
                    ApiConstants.LABEL_BLOCK, ResourceNames.blockLabel(slot)))
            .withFinalizers(ApiConstants.FINALIZER_BLOCK_PROTECTION)
            .withOwnerReferences(
                new OwnerReferenceBuilder()
                    .withApiVersion(ApiConstants.API_VERSION)
                    .withKind(IPPool.KIND)
                    .withName(pool)
                    .withUid(poolUid)
                    .withBlockOwnerDeletion(false)
                    .build())
            .build());
    block.setSpec(new IPBlockSpec(pool, slot.toString(), node));
    try {
      client.resource(block).create();
      writes.incrementAndGet();
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return false;
      }
      throw e;
    }
  }

  /**
   * One ADD on a simulated node drawn at random: an IPAddress of the next address of its slot; once
   * it holds {@code live}, its oldest address goes first (a DEL). Returns the writes made.
   */
  public int churnOnce(int live) {
    Sim sim = draw();
    int made = 0;
    synchronized (sim) {
      if (sim.gone) {
        return 0;
      }
      if (sim.held.size() >= live) {
        delete(sim, sim.held.removeFirst());
        made++;
      }
      made += addTo(sim) ? 1 : 0;
    }
    writes.addAndGet(made);
    return made;
  }

  /** An IPAddress of the next address of {@code sim}'s slot, unless it holds that one already. */
  private boolean addTo(Sim sim) {
    if (!sim.next.hasNext()) {
      sim.next = layout.assignable(sim.slot).iterator();
    }
    IpAddress ip = sim.next.next();
    if (sim.held.contains(ip)) {
      return false;
    }
    create(sim, ip);
    sim.held.addLast(ip);
    live.incrementAndGet();
    return true;
  }

  private String namespaceOf(IpAddress ip) {
    return namespaces.get(Math.floorMod(ip.hashCode(), namespaces.size()));
  }

  private void create(Sim sim, IpAddress ip) {
    create(sim, ip, namespaceOf(ip));
  }

  private void create(Sim sim, IpAddress ip, String namespace) {
    var meta = HandWrittenAddresses.meta(namespace, pool, ip, sim.node, sim.slot);
    if (attachments) {
      meta.withFinalizers(ApiConstants.FINALIZER_ATTACHMENT);
    }
    IPAddress address =
        HandWrittenAddresses.of(
            meta,
            HandWrittenAddresses.spec(
                pool,
                ip,
                sim.slot,
                sim.node,
                "sim",
                new PodReference("sim-" + ip.toString().replace('.', '-'), "sim-uid-" + ip),
                "sim-" + ip.hashCode()));
    client.resource(address).create();
  }

  /** Deletes a held address; it stops counting as held as its DEL begins, as on a node. */
  private void delete(Sim sim, IpAddress ip) {
    live.decrementAndGet();
    var object =
        client
            .resources(IPAddress.class)
            .inNamespace(namespaceOf(ip))
            .withName(ResourceNames.addressName(pool, ip));
    object.delete();
    if (attachments) {
      io.kipam.runtime.client.Named.object(
              client, IPAddress.class, namespaceOf(ip), ResourceNames.addressName(pool, ip))
          .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
      writes.incrementAndGet();
    }
  }

  /** A simulated node that vanished: its name, and the addresses it held then. */
  public record Vanished(String node, List<IpAddress> held) {}

  /**
   * {@code count} simulated nodes drawn at random vanish as a cloud node does: their Node objects
   * are deleted and they make no DEL, so their IPAddresses stay until kipam-operator gives them
   * back; they churn no more. Returns them with what they held.
   */
  public List<Vanished> vanish(int count) {
    List<Vanished> gone = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Sim sim;
      synchronized (sims) {
        if (sims.isEmpty()) {
          break;
        }
        sim = sims.remove(random.nextInt(sims.size()));
      }
      List<IpAddress> held;
      synchronized (sim) {
        sim.gone = true;
        held = List.copyOf(sim.held);
        live.addAndGet(-held.size());
      }
      client.nodes().withName(sim.node).delete();
      writes.incrementAndGet();
      gone.add(new Vanished(sim.node, held));
    }
    return gone;
  }

  /** The namespace the IPAddress of {@code ip} is written in. */
  public String namespaceFor(IpAddress ip) {
    return namespaceOf(ip);
  }

  /**
   * Writes IPAddresses on the simulated nodes, {@code threads} writers at a time, until they hold
   * {@code size}; a write an overloaded API server refuses is tried again.
   */
  public void fillTo(long size, int threads) throws Exception {
    ExecutorService writers = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            writers.submit(
                () -> {
                  while (live() < size) {
                    try {
                      addOnce();
                    } catch (RuntimeException e) {
                      Thread.sleep(100);
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      writers.shutdown();
    }
  }

  /** One ADD on a simulated node drawn at random; returns whether it was made. */
  public boolean addOnce() {
    Sim sim = draw();
    boolean made;
    synchronized (sim) {
      made = !sim.gone && addTo(sim);
    }
    if (made) {
      writes.incrementAndGet();
    }
    return made;
  }

  /**
   * One DEL of the oldest address of a simulated node drawn at random among those that hold one (up
   * to 100 draws); false if none of the drawn held one.
   */
  public boolean deleteOnce() {
    for (int draws = 0; draws < 100; draws++) {
      Sim sim = draw();
      synchronized (sim) {
        if (sim.gone || sim.held.isEmpty()) {
          continue;
        }
        delete(sim, sim.held.removeFirst());
      }
      writes.incrementAndGet();
      return true;
    }
    return false;
  }

  /**
   * Writes an address some simulated node holds a second time, in {@code namespace}, as a faulty
   * writer would (the API server refuses a name twice only within one namespace); returns it.
   */
  public IpAddress plantDuplicate(String namespace) {
    while (true) {
      Sim sim = draw();
      synchronized (sim) {
        if (sim.held.isEmpty()) {
          continue;
        }
        IpAddress ip = sim.held.peekLast();
        create(sim, ip, namespace);
        return ip;
      }
    }
  }

  private Sim draw() {
    synchronized (sims) {
      return sims.get(random.nextInt(sims.size()));
    }
  }

  /**
   * Every second: starts a write of each slot's count that changed and whose last write is old
   * enough, unless one is still under way, {@link #STATUS_WRITERS} at a time, and waits for none:
   * each simulated node's daemon writes its own on its own clock.
   */
  private void writeStatus() {
    List<Sim> all;
    synchronized (sims) {
      all = new ArrayList<>(sims);
    }
    long now = System.nanoTime();
    for (Sim sim : all) {
      long count;
      synchronized (sim) {
        count = sim.held.size();
        if (sim.writing
            || sim.gone
            || count == sim.written
            || now - sim.lastWriteNanos < TimeUnit.SECONDS.toNanos(STATUS_PERIOD_SECONDS)) {
          continue;
        }
        sim.writing = true;
      }
      statusWriters.execute(() -> writeStatus(sim, count, now));
    }
  }

  private void writeStatus(Sim sim, long count, long now) {
    try {
      client
          .resources(IPBlock.class)
          .withName(ResourceNames.blockName(pool, sim.slot))
          .subresource("status")
          .patch(
              PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"allocated\":" + count + "}}");
      writes.incrementAndGet();
      synchronized (sim) {
        sim.written = count;
        sim.lastWriteNanos = now;
      }
    } catch (KubernetesClientException e) {
      // the next round tries again
    } finally {
      synchronized (sim) {
        sim.writing = false;
      }
    }
  }

  @Override
  public void close() {
    statusWriter.shutdownNow();
    statusWriters.shutdownNow();
  }
}
