package org.gphash.cuda.runtime;

import java.lang.foreign.MemorySegment;

import jcuda.Pointer;

/**
 * A JCuda pointer to any host address, e.g. a {@link MemorySegment} of a file mapping: JCuda's own
 * pointers come from {@code ByteBuffer}s and stop at 2 GiB.
 */
public final class HostPointer extends Pointer {

    public HostPointer(long address) {
        super(address);
    }

    public static HostPointer of(MemorySegment segment) {
        return new HostPointer(segment.address());
    }
}
