package io.kipam.system.harness;

import io.kipam.testing.ControlPlaneBinaries;
import java.nio.file.Path;

/**
 * What the cni-plugin module's build leaves in its directory and the system tests run as a node
 * would: the native kipam executable, the Java version of kipam, kipam-node's jar and runtime
 * classpath, and the script that installs kipam into a CNI bin directory. The reactor builds
 * cni-plugin before this module, so these exist whenever its tests run.
 */
public final class CniPluginBuild {

  private CniPluginBuild() {}

  /** The cni-plugin module's directory. */
  public static Path module() {
    return ControlPlaneBinaries.repositoryRoot().resolve("cni-plugin");
  }

  /** Its build directory: the jars, {@code kipam} and {@code daemon.classpath}. */
  public static Path target() {
    return module().resolve("target");
  }

  /** The native binary {@code src/main/go/build.sh} built in the generate-resources phase. */
  public static Path nativeKipam() {
    return target().resolve("kipam");
  }

  /** {@code install-kipam.sh}, as the kipam-node image runs it. */
  public static Path installScript() {
    return module().resolve("src/main/dist/install-kipam.sh");
  }
}
