/**
 * Hand-written Foreign Function &amp; Memory bindings for the few C library calls the pool file
 * needs and the JDK does not offer: {@code open}, {@code flock} and {@code close} on a descriptor
 * the engine owns, so that its exclusive lock belongs to that open file description (see
 * {@code org.gphash.persistence.PoolLock}). Same shape as {@code org.gphash.pmem}.
 */
package org.gphash.posix;
