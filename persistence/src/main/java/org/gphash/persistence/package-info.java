/**
 * The pool file and how bytes in it are made durable: exclusive, owner-only pool files mapped as
 * {@link java.lang.foreign.MemorySegment}s ({@link org.gphash.persistence.PoolFile}), and the one
 * small interface through which every persist point of the engine goes
 * ({@link org.gphash.persistence.Persister}).
 */
package org.gphash.persistence;
