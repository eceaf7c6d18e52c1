/**
 * The table both engines build on: the pool's table state (header choice, layout, the close
 * record), hashing, the probe of a key's candidate slots, the slot protocol, the value heap and its
 * growth, the epoch gate that reclaims value blocks, resizing, recovery, the read path
 * ({@link org.gphash.table.TableReader}) and the read-only checks. Internal: the public API is
 * {@link org.gphash.GPHashIndex}.
 *
 * <p>The pool format and the algorithm here are the reference for the GPU engine: a kernel must
 * compute the same hashes ({@link org.gphash.table.KeyHasher}), visit candidate slots in the same
 * order ({@link org.gphash.table.Probe}) and follow the same slot protocol
 * ({@link org.gphash.table.SlotProtocol}). Whole-table passes (recovery's scans, resize's rehash)
 * run as Java loops ({@link org.gphash.table.CpuPasses}) or as another engine's kernels
 * ({@link org.gphash.table.TableKernels}).
 */
package org.gphash.table;
