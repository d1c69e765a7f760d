package io.kipam.node.alloc;

import java.time.Instant;

/**
 * An address written with an unknown outcome ({@code nameTaken}: the API answered 409, so an object
 * this node has not seen holds the name), kept taken until a fresh read settles it.
 */
public record Uncertain(Lease wanted, Instant since, boolean nameTaken) {}
