package org.gphash.persistence;

import java.lang.foreign.MemorySegment;

/**
 * Told when the mapping is replaced or goes away, so that whoever registered it elsewhere (the GPU
 * engine registers it with CUDA) can let go of the old one before it is unmapped.
 */
public interface MappingListener {
    /** The mapping {@code old} is about to be unmapped. */
    void beforeUnmap(MemorySegment old);

    /** {@code current} is the new mapping of the whole file. */
    void afterMap(MemorySegment current);

    /**
     * The mapping grew in place: {@code current} starts where the previous mapping did, whose
     * first {@code previousSize} bytes are unchanged and still mapped. By default, as a new mapping.
     */
    default void afterGrowInPlace(MemorySegment current, long previousSize) {
        afterMap(current);
    }
}
