package org.gphash.persistence;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * Wraps the {@link Persister} chosen for each new mapping of a writable pool. The crash harness
 * installs one ({@link PoolFile#decoratePersisters}) that keeps a shadow of what was persisted, so
 * that a simulated power failure can throw away everything that was stored but never persisted.
 */
@FunctionalInterface
public interface PersisterDecorator {

    PersisterDecorator NONE = (path, mapping, chosen) -> chosen;

    /**
     * Called each time {@code path} is mapped (on open, create and every growth), with the new
     * mapping of the whole file and the persister chosen for it.
     */
    Persister decorate(Path path, MemorySegment mapping, Persister chosen);
}
