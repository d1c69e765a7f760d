/**
 * The CNI wire format of kipam: what a container runtime passes to the {@code kipam} executable
 * (CNI_* environment variables and a network configuration on stdin) and what kipam answers (stdout
 * JSON and an exit code), for CNI 0.3.0, 0.3.1, 0.4.0, 1.0.0 and 1.1.0. Pure translation without
 * I/O: {@link io.kipam.cni.spec.CniRequest#parse} is the one loader, {@link
 * io.kipam.cni.spec.CniResponse} the one writer and {@link io.kipam.cni.spec.CniDispatcher} joins
 * them around a {@link io.kipam.cni.spec.CniPlugin}.
 *
 * <p>Error codes are listed, with their meaning, in {@link io.kipam.cni.spec.CniErrorCode}: the
 * specification's 1-7, 11, 50 and 51, and kipam's own from 100.
 *
 * <p>Choices the specification leaves open, made here so every part of kipam agrees:
 *
 * <ul>
 *   <li>Checks run in a fixed order and the first failing stage answers: environment (4), stdin
 *       size, JSON syntax (6), cniVersion and whether it has the command (1), configuration (7, or
 *       2 for unsupported ipam keys). Within a stage every problem is reported at once.
 *   <li>stdin over 1 MiB is refused unread with code 7; the shim forwards one byte more than the
 *       limit so the daemon can tell.
 *   <li>Required variables follow the 1.x specification for every version (CNI_PATH only for GC),
 *       since kipam delegates to no other plugin. ADD also needs K8S_POD_NAMESPACE and K8S_POD_NAME
 *       in CNI_ARGS, because an address is owned by its pod.
 *   <li>An unknown key in {@code ipam} is reported by key only (code 2); the specification asks for
 *       the value too, but a misplaced value may be a credential.
 *   <li>GC without {@code cni.dev/valid-attachments}, or with one malformed entry, fails with code
 *       7 instead of releasing addresses; {@code cni.dev/attachments}, the draft key libcni also
 *       sends, is read only when the current key is absent.
 *   <li>The MAC comes from {@code runtimeConfig.mac} (the "mac" capability) or CNI_ARGS MAC; two
 *       different MACs are an error.
 *   <li>An error is answered in the caller's cniVersion when stdin names a supported one, else in
 *       the newest; VERSION answers in the caller's version on the same terms.
 * </ul>
 */
package io.kipam.cni.spec;
