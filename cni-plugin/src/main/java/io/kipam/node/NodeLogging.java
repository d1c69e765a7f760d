package io.kipam.node;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import org.slf4j.Logger;

/**
 * kipam-node's logging, set up in code rather than from an XML file: reading one loads an XML
 * parser and some 400 classes of logback's own, about 3 MiB of a daemon that should stay small
 * (docs/benchmarks.md). INFO and up to standard error, the client's and the server's own logs from
 * WARN. A {@code logback.configurationFile}, a {@code logback-test.xml} on the classpath (the
 * tests') or a {@code logback.xml} on it (an application that has kipam-node's classes on its
 * classpath and logs its own way, as kipam-operator's tests do) still wins.
 */
public final class NodeLogging extends ContextAwareBase implements Configurator {

  static final String PATTERN =
      "%d{yyyy-MM-dd'T'HH:mm:ss.SSSX} %-5level [%thread] %logger{24} - %msg%n";

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (System.getProperty("logback.configurationFile") != null
        || NodeLogging.class.getClassLoader().getResource("logback-test.xml") != null
        || NodeLogging.class.getClassLoader().getResource("logback.xml") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(PATTERN);
    encoder.start();
    ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
    stderr.setContext(context);
    stderr.setName("STDERR");
    stderr.setTarget("System.err");
    stderr.setEncoder(encoder);
    stderr.start();
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.INFO);
    root.addAppender(stderr);
    context.getLogger("io.fabric8").setLevel(Level.WARN);
    context.getLogger("org.eclipse.jetty").setLevel(Level.WARN);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }
}
