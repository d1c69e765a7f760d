package io.kipam.node;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node-local lock that keeps two daemon processes on one node (say, the old and the new pod of
 * a rolling update) from allocating at once: an exclusive lock on a file in the state directory,
 * released by the kernel when the process exits, however it exits.
 */
public final class NodeLock implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(NodeLock.class);

  private final FileChannel channel;
  private final FileLock lock;

  private NodeLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /** Blocks until this process holds the lock of {@code file}. */
  public static NodeLock acquire(Path file) throws IOException {
    Files.createDirectories(file.getParent());
    FileChannel channel =
        FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock = channel.tryLock();
    if (lock == null) {
      log.info("another kipam-node holds {}; waiting for it to exit", file);
      lock = channel.lock();
    }
    log.info("holding the node lock {}", file);
    return new NodeLock(channel, lock);
  }

  @Override
  public void close() throws IOException {
    lock.release();
    channel.close();
  }
}
