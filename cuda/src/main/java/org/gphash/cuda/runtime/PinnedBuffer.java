package org.gphash.cuda.runtime;

import static jcuda.driver.JCudaDriver.cuMemHostRegister;
import static jcuda.driver.JCudaDriver.cuMemHostUnregister;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import jcuda.Pointer;

/**
 * Page-locked host memory: native memory from an FFM arena registered with CUDA, so asynchronous
 * copies to and from it overlap kernels (pageable memory would make them synchronous). Grows on
 * demand; contents are not kept across growth. Not thread-safe.
 */
public final class PinnedBuffer implements AutoCloseable {

    private static final int PAGE = 4096;

    private Arena arena;
    private MemorySegment segment;
    private HostPointer pointer;

    public PinnedBuffer ensure(long bytes) {
        if (segment == null || bytes > segment.byteSize()) {
            close();
            long size = Math.max(PAGE, (bytes + PAGE - 1) / PAGE * PAGE);
            Arena a = Arena.ofShared();
            MemorySegment s = a.allocate(size, PAGE);
            HostPointer p = HostPointer.of(s);
            cuMemHostRegister(p, size, 0);
            arena = a;
            segment = s;
            pointer = p;
        }
        return this;
    }

    /** At least {@code bytes} bytes, the first {@code keep} of the contents kept across growth. */
    public PinnedBuffer ensureKeeping(long bytes, long keep) {
        if (segment == null || bytes > segment.byteSize()) {
            MemorySegment old = segment;
            Arena oldArena = arena;
            HostPointer oldPointer = pointer;
            segment = null;  // ensure allocates afresh; the old block is freed once its bytes are copied
            ensure(Math.max(bytes, old == null ? 0 : 2 * old.byteSize()));
            if (old != null) {
                MemorySegment.copy(old, 0, segment, 0, Math.min(keep, old.byteSize()));
                cuMemHostUnregister(oldPointer);
                oldArena.close();
            }
        }
        return this;
    }

    public MemorySegment segment() {
        return segment;
    }

    public Pointer pointer() {
        return pointer;
    }

    public Pointer at(long offset) {
        return pointer.withByteOffset(offset);
    }

    @Override
    public void close() {
        if (segment != null) {
            cuMemHostUnregister(pointer);
            arena.close();
            segment = null;
            pointer = null;
            arena = null;
        }
    }
}
