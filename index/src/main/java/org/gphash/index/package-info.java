/**
 * The CPU engine: single-key operations and batches run by Java threads on the mapped pool, over the
 * table ({@code org.gphash.table}). The reference implementation the GPU engine is checked against.
 * Internal: the public API is {@link org.gphash.GPHashIndex}.
 */
package org.gphash.index;
