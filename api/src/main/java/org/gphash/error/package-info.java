/**
 * gphash's exceptions: {@link org.gphash.error.GPHashException}, the root of every exception the
 * engine throws for a pool, and the pool file's I/O failures under it. The index's own exceptions
 * (format, configuration, a full pool, the GPU) are in {@code org.gphash} and extend the same root.
 */
package org.gphash.error;
