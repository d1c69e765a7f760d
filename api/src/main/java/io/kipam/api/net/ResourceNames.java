package io.kipam.api.net;

import static io.kipam.api.net.Messages.quote;

import java.math.BigInteger;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The names kipam derives for its resources, so that two claims of the same block or address
 * collide on {@code create}. The mapping is deterministic and bijective: every pool name and value
 * has exactly one name, and the {@code parse} methods accept exactly the names the forward
 * functions produce, nothing else ("10-0-01-7" is refused because no address encodes to it).
 *
 * <p>An address is encoded DNS-safely: IPv4 as its dotted quad with '-' for '.' ("10-0-1-7"), IPv6
 * as all eight groups in lowercase hex without leading zeros, joined with '-' and never compressed
 * ("2001-db8-0-0-0-0-0-1"). The number of fields tells the family; the text starts and ends with a
 * hex digit and is at most 39 characters. A block label is the encoded network and the prefix
 * length ("10-0-1-0-26"), at most 43 characters, so it is a valid label value. Block and address
 * names are the pool name, '.', and the block label or encoded address: always DNS-1123 subdomains,
 * at most 63 + 1 + 43 characters. Pool names contain no '.', so the first '.' splits a name
 * unambiguously.
 */
public final class ResourceNames {

  /** The longest DNS-1123 label, and so the longest pool name. */
  public static final int MAX_POOL_NAME_LENGTH = 63;

  private static final Pattern DNS_1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern DECIMAL = Pattern.compile("0|[1-9][0-9]{0,2}");
  private static final Pattern HEX_GROUP = Pattern.compile("0|[1-9a-f][0-9a-f]{0,3}");

  /** A parsed IPBlock name. */
  public record BlockName(String pool, Cidr cidr) {
    public BlockName {
      validatePoolName(pool);
      Objects.requireNonNull(cidr, "cidr");
    }

    @Override
    public String toString() {
      return blockName(pool, cidr);
    }
  }

  /** A parsed IPAddress name. */
  public record AddressName(String pool, IpAddress address) {
    public AddressName {
      validatePoolName(pool);
      Objects.requireNonNull(address, "address");
    }

    @Override
    public String toString() {
      return addressName(pool, address);
    }
  }

  private ResourceNames() {}

  /**
   * Checks that {@code pool} is a DNS-1123 label: lowercase letters, digits and '-', starting and
   * ending with a letter or digit, at most 63 characters.
   */
  public static void validatePoolName(String pool) {
    if (pool == null || pool.isEmpty()) {
      throw new IllegalArgumentException("a pool name is required");
    }
    if (pool.length() > MAX_POOL_NAME_LENGTH) {
      throw new IllegalArgumentException(
          "pool name "
              + quote(pool)
              + " has "
              + pool.length()
              + " characters; a DNS-1123 label has at most 63");
    }
    if (!DNS_1123_LABEL.matcher(pool).matches()) {
      throw new IllegalArgumentException(
          "pool name "
              + quote(pool)
              + " is not a DNS-1123 label: use lowercase letters, digits and '-',"
              + " starting and ending with a letter or digit");
    }
  }

  /** The DNS-safe encoding of {@code address}; see the class documentation. */
  public static String encode(IpAddress address) {
    boolean v4 = address.family() == IpFamily.V4;
    StringBuilder text = new StringBuilder(39);
    for (int field : address.fields()) {
      if (text.length() > 0) {
        text.append('-');
      }
      text.append(v4 ? Integer.toString(field) : Integer.toHexString(field));
    }
    return text.toString();
  }

  /** The address whose {@link #encode encoding} is {@code encoded}; rejects any other text. */
  public static IpAddress decode(String encoded) {
    String[] fields = encoded.split("-", -1);
    IpFamily family = fields.length == 4 ? IpFamily.V4 : fields.length == 8 ? IpFamily.V6 : null;
    if (family == null) {
      throw new IllegalArgumentException(
          quote(encoded)
              + " is not an encoded address: it has "
              + fields.length
              + " '-'-separated fields, where IPv4 has 4 and IPv6 has 8");
    }
    Pattern fieldForm = family == IpFamily.V4 ? DECIMAL : HEX_GROUP;
    int radix = family == IpFamily.V4 ? 10 : 16;
    int width = family.bits() / fields.length;
    BigInteger value = BigInteger.ZERO;
    for (String field : fields) {
      if (!fieldForm.matcher(field).matches() || Integer.parseInt(field, radix) >= 1 << width) {
        throw new IllegalArgumentException(
            quote(encoded)
                + " is not an encoded "
                + family.displayName()
                + " address: field "
                + quote(field)
                + (family == IpFamily.V4
                    ? " is not a decimal 0-255 without leading zeros"
                    : " is not lowercase hex 0-ffff without leading zeros"));
      }
      value = value.shiftLeft(width).or(BigInteger.valueOf(Integer.parseInt(field, radix)));
    }
    return IpAddress.of(family, value);
  }

  /** The encoded network and prefix length ("10-0-1-0-26"); a valid label value. */
  public static String blockLabel(Cidr block) {
    return encode(block.network()) + "-" + block.prefixLength();
  }

  /** The block whose {@link #blockLabel label} is {@code label}; rejects any other text. */
  public static Cidr parseBlockLabel(String label) {
    int dash = label.lastIndexOf('-');
    String prefix = dash < 0 ? "" : label.substring(dash + 1);
    if (!DECIMAL.matcher(prefix).matches()) {
      throw new IllegalArgumentException(
          quote(label) + " is not a block label: it does not end in '-' and a prefix length");
    }
    IpAddress network = decode(label.substring(0, dash));
    int prefixLength = Integer.parseInt(prefix);
    if (prefixLength > network.family().bits()) {
      throw new IllegalArgumentException(
          quote(label) + " is not a block label: prefix length " + prefix + " is too long");
    }
    Cidr block = Cidr.enclosing(network, prefixLength);
    if (!block.network().equals(network)) {
      throw new IllegalArgumentException(
          quote(label) + " is not a block label: its network has host bits set");
    }
    return block;
  }

  /** The IPBlock name for {@code block} of {@code pool}: "pool.10-0-1-0-26". */
  public static String blockName(String pool, Cidr block) {
    validatePoolName(pool);
    return pool + "." + blockLabel(block);
  }

  /**
   * The IPBlock name of the sub-claim of {@code address} in {@code pool}: the block name of the
   * address's host prefix, "pool.10-0-1-7-32". It depends on nothing but pool and address, so every
   * node computes the same name and the {@code create} of it is the claim; it is also the name a
   * host-prefix pool gives the same address, so the two can never hold one address twice.
   */
  public static String subClaimName(String pool, IpAddress address) {
    return blockName(pool, Cidr.of(address, address.family().bits()));
  }

  /** The IPAddress name for {@code address} of {@code pool}: "pool.10-0-1-7". */
  public static String addressName(String pool, IpAddress address) {
    validatePoolName(pool);
    return pool + "." + encode(address);
  }

  /** The inverse of {@link #blockName}; rejects every name it does not produce. */
  public static BlockName parseBlockName(String name) {
    int dot = name.indexOf('.');
    try {
      requireDot(dot);
      String pool = name.substring(0, dot);
      validatePoolName(pool);
      return new BlockName(pool, parseBlockLabel(name.substring(dot + 1)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          quote(name) + " is not an IPBlock name (pool.block-label): " + e.getMessage(), e);
    }
  }

  /** The inverse of {@link #addressName}; rejects every name it does not produce. */
  public static AddressName parseAddressName(String name) {
    int dot = name.indexOf('.');
    try {
      requireDot(dot);
      String pool = name.substring(0, dot);
      validatePoolName(pool);
      return new AddressName(pool, decode(name.substring(dot + 1)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          quote(name) + " is not an IPAddress name (pool.encoded-address): " + e.getMessage(), e);
    }
  }

  private static void requireDot(int dot) {
    if (dot < 0) {
      throw new IllegalArgumentException("it has no '.' after the pool name");
    }
  }
}
