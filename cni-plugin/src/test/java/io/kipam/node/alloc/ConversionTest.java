package io.kipam.node.alloc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kipam.api.net.Cidr;
import io.kipam.api.net.IpAddress;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which addresses of a slot asked to become Shared a {@link Conversion} still has to sub-claim. */
class ConversionTest {

  private static BlockObject slot(String pool, String cidr) {
    return new BlockObject(
        new BlockRef(pool, Cidr.parse(cidr), "uid-" + cidr),
        "1",
        true,
        null,
        null,
        0L,
        false,
        false,
        "round-1");
  }

  private static AddressKey key(String pool, String ip) {
    return new AddressKey(pool, IpAddress.parse(ip));
  }

  @Test
  void theUncoveredAddressesOfEachSlotAreMissingInAddressOrder() {
    BlockObject first = slot("p", "10.0.0.0/29");
    BlockObject second = slot("p", "10.0.0.8/29");
    Set<AddressKey> wanted =
        Set.of(
            key("p", "10.0.0.5"),
            key("p", "10.0.0.2"),
            key("p", "10.0.0.3"),
            key("p", "10.0.0.9"),
            key("p", "10.0.0.20"), // in neither slot
            key("other", "10.0.0.4")); // same range, another pool

    List<Conversion> plan =
        Conversion.plan(
            List.of(first, second), wanted, address -> address.equals(key("p", "10.0.0.3")));

    assertThat(plan)
        .containsExactly(
            new Conversion(
                first, List.of(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.5"))),
            new Conversion(second, List.of(IpAddress.parse("10.0.0.9"))));
  }

  @Test
  void aSlotWhoseAddressesAreAllCoveredMayBeWrittenShared() {
    BlockObject only = slot("p", "10.0.0.0/29");

    List<Conversion> plan =
        Conversion.plan(List.of(only), Set.of(key("p", "10.0.0.1")), address -> true);

    assertThat(plan).containsExactly(new Conversion(only, List.of()));
  }
}
