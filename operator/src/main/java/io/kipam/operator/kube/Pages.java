package io.kipam.operator.kube;

import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import java.util.function.Consumer;
import java.util.function.Function;

/** Every object of a LIST, read in pages of {@value #SIZE}, as the audit reads (design §6). */
public final class Pages {

  public static final long SIZE = 500;

  private Pages() {}

  public static <T extends io.fabric8.kubernetes.api.model.HasMetadata> void each(
      Function<ListOptions, KubernetesResourceList<T>> list, Consumer<T> each) {
    String token = null;
    do {
      KubernetesResourceList<T> page =
          list.apply(new ListOptionsBuilder().withLimit(SIZE).withContinue(token).build());
      page.getItems().forEach(each);
      token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (token != null && !token.isEmpty());
  }
}
