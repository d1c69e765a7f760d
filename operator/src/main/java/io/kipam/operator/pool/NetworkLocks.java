package io.kipam.operator.pool;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One lock per {@code spec.network}, held around exactly one thing: a fresh LIST of IPPools, the
 * decision whether a pool not yet Ready may become Ready, and the write of its status. This is the
 * one place in kipam-operator where an API call runs under a lock, and it must: the operator
 * reconciles different pools on different threads, and a decision taken on a read that another
 * thread's write has not reached yet can mark two overlapping pools Ready (each read the other as
 * not Ready). Holding the network's lock from the read to the end of the write makes every Ready
 * decision of a network see the ones before it. One process is enough, since only the leader
 * reconciles. Networks are few and locks are never removed.
 */
final class NetworkLocks {

  private final ConcurrentHashMap<String, ReentrantLock> locks = new ConcurrentHashMap<>();

  /** Runs {@code work} holding the lock of {@code network}, and returns what it returned. */
  <T> T holding(String network, Supplier<T> work) {
    ReentrantLock lock = locks.computeIfAbsent(network, n -> new ReentrantLock());
    lock.lock();
    try {
      return work.get();
    } finally {
      lock.unlock();
    }
  }
}
