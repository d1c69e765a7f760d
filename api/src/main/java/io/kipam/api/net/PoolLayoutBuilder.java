package io.kipam.api.net;

import static io.kipam.api.net.Messages.quote;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Collects the address fields of an IPPool spec as the user wrote them and validates them into a
 * {@link PoolLayout}. Every value must be in canonical form (see {@link IpAddress} and {@link
 * Cidr}); null means the optional field is absent. {@link #build()} reports every problem at once
 * in an {@link InvalidPoolSpecException} whose errors name the field.
 *
 * <p>Rules: {@code spec.cidr} is required and not IPv4-mapped. {@code spec.blockSize} lies between
 * the pool's prefix length and the host prefix (32 or 128), both included; when absent it is {@link
 * #defaultBlockSize(Cidr)}. {@code spec.rangeStart} and {@code spec.rangeEnd} lie inside the CIDR
 * with start not after end; either defaults to the CIDR's edge. Each {@code spec.exclude[i]} is a
 * CIDR or a single address inside the CIDR; unlike {@code spec.cidr} it may be an IPv4-mapped IPv6
 * range, so that a pool spanning ::ffff:0:0/96 can keep those addresses out of use. {@code
 * spec.gateway} lies inside the CIDR, as admission requires, and is never handed out.
 */
public final class PoolLayoutBuilder {

  static final String CIDR = "spec.cidr";
  static final String RANGE_START = "spec.rangeStart";
  static final String RANGE_END = "spec.rangeEnd";
  static final String EXCLUDE = "spec.exclude";
  static final String GATEWAY = "spec.gateway";
  static final String BLOCK_SIZE = "spec.blockSize";

  /** The block size of an IPv4 pool that names none: 64 addresses, Calico's default too. */
  public static final int DEFAULT_IPV4_BLOCK_SIZE = 26;

  /** The block size of an IPv6 pool that names none: 64 addresses, Calico's default too. */
  public static final int DEFAULT_IPV6_BLOCK_SIZE = 122;

  private String cidr;
  private String rangeStart;
  private String rangeEnd;
  private List<String> exclude = List.of();
  private String gateway;
  private Integer blockSize;

  PoolLayoutBuilder() {}

  public PoolLayoutBuilder cidr(String cidr) {
    this.cidr = cidr;
    return this;
  }

  public PoolLayoutBuilder rangeStart(String rangeStart) {
    this.rangeStart = rangeStart;
    return this;
  }

  public PoolLayoutBuilder rangeEnd(String rangeEnd) {
    this.rangeEnd = rangeEnd;
    return this;
  }

  /** CIDRs or single addresses; null means none. */
  public PoolLayoutBuilder exclude(List<String> exclude) {
    this.exclude = exclude == null ? List.of() : new ArrayList<>(exclude);
    return this;
  }

  public PoolLayoutBuilder gateway(String gateway) {
    this.gateway = gateway;
    return this;
  }

  public PoolLayoutBuilder blockSize(Integer blockSize) {
    this.blockSize = blockSize;
    return this;
  }

  /**
   * The validated layout.
   *
   * @throws InvalidPoolSpecException listing every invalid field
   */
  public PoolLayout build() {
    FieldErrors errors = new FieldErrors();
    Optional<Cidr> pool = errors.parse(CIDR, cidr, Cidr::parse);
    if (cidr == null) {
      errors.add(CIDR, "required");
    }
    // Without a valid CIDR the other fields are still parsed, so their own errors show up too.
    checkBlockSize(errors, pool);
    Optional<IpAddress> start = addressInPool(errors, RANGE_START, rangeStart, pool);
    Optional<IpAddress> end = addressInPool(errors, RANGE_END, rangeEnd, pool);
    if (start.isPresent() && end.isPresent() && start.get().compareTo(end.get()) > 0) {
      errors.add(
          RANGE_END, quote(end.get()) + " comes before " + RANGE_START + " " + quote(start.get()));
    }
    List<Cidr> excludes = new ArrayList<>();
    for (int i = 0; i < exclude.size(); i++) {
      String field = EXCLUDE + "[" + i + "]";
      if (exclude.get(i) == null) {
        errors.add(field, "required; an exclude is a CIDR or an address");
      }
      errors
          .parse(field, exclude.get(i), PoolLayoutBuilder::parseExclude)
          .filter(e -> sameFamily(errors, field, e, e.family(), pool))
          .filter(e -> isInside(errors, field, e, c -> c.contains(e), pool))
          .ifPresent(excludes::add);
    }
    Optional<IpAddress> gw =
        errors
            .parse(GATEWAY, gateway, IpAddress::parse)
            .filter(g -> sameFamily(errors, GATEWAY, g, g.family(), pool))
            .filter(g -> isInside(errors, GATEWAY, g, c -> c.contains(g), pool));
    errors.throwIfAny();
    Cidr c = pool.orElseThrow();
    AddressRange range = AddressRange.of(start.orElse(c.first()), end.orElse(c.last()));
    int size = blockSize != null ? blockSize : defaultBlockSize(c);
    return new PoolLayout(c, range, excludes, gw, size);
  }

  /**
   * The block size used when {@code spec.blockSize} is absent: /26 for IPv4 and /122 for IPv6, or
   * the pool's own prefix length when the pool is smaller than that.
   */
  public static int defaultBlockSize(Cidr pool) {
    int preferred =
        pool.family() == IpFamily.V4 ? DEFAULT_IPV4_BLOCK_SIZE : DEFAULT_IPV6_BLOCK_SIZE;
    return Math.max(preferred, pool.prefixLength());
  }

  /** An exclude is a CIDR, or a single address standing for its /32 or /128. */
  private static Cidr parseExclude(String text) {
    if (text.indexOf('/') >= 0) {
      return Cidr.parse(text, true);
    }
    IpAddress address = IpAddress.parse(text);
    return Cidr.of(address, address.family().bits());
  }

  private void checkBlockSize(FieldErrors errors, Optional<Cidr> pool) {
    String allowed =
        pool.map(c -> "; use a prefix length from " + c.prefixLength() + " to " + c.family().bits())
            .orElse("");
    if (blockSize == null) {
      return;
    }
    if (blockSize < 0 || blockSize > IpFamily.V6.bits()) {
      errors.add(BLOCK_SIZE, blockSize + " is not a prefix length" + allowed);
    } else if (pool.isPresent() && blockSize < pool.get().prefixLength()) {
      errors.add(
          BLOCK_SIZE,
          blockSize + " is wider than the pool's /" + pool.get().prefixLength() + allowed);
    } else if (pool.isPresent() && blockSize > pool.get().family().bits()) {
      errors.add(
          BLOCK_SIZE,
          blockSize
              + " is longer than the "
              + pool.get().family().displayName()
              + " host prefix"
              + allowed);
    }
  }

  private static Optional<IpAddress> addressInPool(
      FieldErrors errors, String field, String text, Optional<Cidr> pool) {
    return errors
        .parse(field, text, IpAddress::parse)
        .filter(a -> sameFamily(errors, field, a, a.family(), pool))
        .filter(a -> isInside(errors, field, a, c -> c.contains(a), pool));
  }

  private static boolean sameFamily(
      FieldErrors errors, String field, Object value, IpFamily family, Optional<Cidr> pool) {
    if (pool.isEmpty() || pool.get().family() == family) {
      return true;
    }
    errors.add(
        field,
        quote(value)
            + " is "
            + family.displayName()
            + " but "
            + CIDR
            + " "
            + quote(pool.get())
            + " is "
            + pool.get().family().displayName());
    return false;
  }

  private static boolean isInside(
      FieldErrors errors, String field, Object value, Predicate<Cidr> inside, Optional<Cidr> pool) {
    if (pool.isEmpty() || inside.test(pool.get())) {
      return true;
    }
    errors.add(field, quote(value) + " is not inside " + CIDR + " " + quote(pool.get()));
    return false;
  }

  /** Collects problems so that validation can go on past the first one. */
  private static final class FieldErrors {
    private final List<InvalidPoolSpecException.FieldError> errors = new ArrayList<>();

    void add(String field, String message) {
      errors.add(new InvalidPoolSpecException.FieldError(field, message));
    }

    /** The parsed value; empty if the field is absent (null) or invalid (then recorded). */
    <T> Optional<T> parse(String field, String text, Function<String, T> parser) {
      if (text == null) {
        return Optional.empty();
      }
      try {
        return Optional.of(parser.apply(text));
      } catch (IllegalArgumentException e) {
        add(field, e.getMessage());
        return Optional.empty();
      }
    }

    void throwIfAny() {
      if (!errors.isEmpty()) {
        throw new InvalidPoolSpecException(errors);
      }
    }
  }
}
