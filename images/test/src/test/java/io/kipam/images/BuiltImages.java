package io.kipam.images;

import io.kipam.testing.ImageTarball;
import java.io.IOException;
import java.nio.file.Path;

/** The two image tarballs this build wrote ({@code kipam.imagesDir}), unpacked for a test class. */
final class BuiltImages {

  private static final Path IMAGES = Path.of(System.getProperty("kipam.imagesDir"));

  private BuiltImages() {}

  /** kipam-operator's image, unpacked under {@code dir}/operator. */
  static ImageTarball operator(Path dir) throws IOException {
    return ImageTarball.unpack(IMAGES.resolve("kipam-operator-image.tar"), dir.resolve("operator"));
  }

  /** kipam-node's image, unpacked under {@code dir}/node. */
  static ImageTarball node(Path dir) throws IOException {
    return ImageTarball.unpack(IMAGES.resolve("kipam-node-image.tar"), dir.resolve("node"));
  }
}
