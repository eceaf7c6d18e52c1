/**
 * The GPHash table on the CPU: pool header, geometry, hashing, slot protocol, value heap, epoch
 * gate, resizing and recovery. Internal: the public API is {@link org.gphash.GPHashIndex}.
 *
 * <p>The pool format and the algorithm here are the reference for the GPU engine: a kernel must
 * compute the same hashes ({@link org.gphash.index.KeyHasher}), visit candidate slots in the same
 * order ({@link org.gphash.index.Probe}) and follow the same slot protocol
 * ({@link org.gphash.format.SlotMeta}).
 */
package org.gphash.index;
