package org.gphash.persistence;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import org.gphash.error.PoolIoException;
import org.gphash.posix.LibC;

/**
 * A pool file mapped at the start of a larger range of reserved address space, so that growing the
 * file extends the mapping in place: the pool keeps its address, nothing already mapped is unmapped
 * or faulted again, and whoever registered the mapping elsewhere (the GPU engine pins it for CUDA)
 * only has to add the new tail instead of releasing and re-pinning the whole pool (which took tens of
 * milliseconds per growth for a pool of 200 MB, and grows with the pool).
 *
 * <p>The reservation is {@code PROT_NONE} anonymous memory with {@code MAP_NORESERVE}: it costs
 * address space only. The file is mapped over its start with {@code MAP_FIXED}. Every segment this
 * class hands out belongs to one shared arena, closed (so that a late access throws instead of
 * faulting) before the range is unmapped.
 */
@SuppressWarnings("restricted") // reinterpreting the mapping's address is this class's purpose
final class ReservedMapping implements AutoCloseable {

    static final long PAGE = 4096;
    /** At least this much address space per pool (it costs no memory); tests lower it to reach its end. */
    static volatile long minReserve = 64L << 30;

    private final Path path;
    private final long base;
    private final long reserved;
    private final Arena arena = Arena.ofShared();
    private long mapped;

    private ReservedMapping(Path path, long base, long reserved) {
        this.path = path;
        this.base = base;
        this.reserved = reserved;
    }

    /**
     * Reserves address space for at least four times {@code size} bytes and maps the file's first
     * {@code size} bytes read-write at its start; null, having done nothing, when the address space
     * cannot be reserved.
     *
     * @param descriptorPath a path that opens exactly the locked file ({@code /proc/self/fd/N})
     */
    static ReservedMapping map(Path path, Path descriptorPath, long size) {
        long reserve = Math.max(minReserve, roundUp(size) * 4);
        LibC.MapResult r = LibC.mmap(0, reserve, LibC.PROT_NONE,
                LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS | LibC.MAP_NORESERVE, -1, 0);
        if (r.failed()) {
            return null;  // no room in the address space (ulimit -v): the caller maps the file as the JDK does
        }
        ReservedMapping m = new ReservedMapping(path, r.address(), reserve);
        try {
            m.mapFile(descriptorPath, 0, size);
        } catch (RuntimeException e) {
            m.close();
            throw e;
        }
        return m;
    }

    /** {@return whether the file can grow to {@code size} bytes without leaving the reservation} */
    boolean canGrowTo(long size) {
        return size <= reserved;
    }

    /** Maps the file's bytes from the current end up to {@code size} (the file already has them). */
    void growTo(Path descriptorPath, long size) {
        if (size <= mapped) {
            return;
        }
        if (!canGrowTo(size)) {
            throw new IllegalArgumentException("pool " + path + ": " + size + " bytes do not fit the reservation of "
                    + reserved);
        }
        // mmap maps whole pages: the last page of the previous length is mapped already (and may be
        // pinned by CUDA), so the new part starts at the next page and nothing mapped is replaced.
        long from = roundUp(mapped);
        if (size <= from) {
            mapped = size;
            return;
        }
        mapFile(descriptorPath, from, size);
    }

    private void mapFile(Path descriptorPath, long from, long to) {
        LibC.Result fd = LibC.open(descriptorPath.toString(), LibC.O_RDWR | LibC.O_CLOEXEC, 0);
        if (fd.failed()) {
            throw new PoolIoException("cannot open pool " + path + " to map it: " + LibC.strerror(fd.errno()));
        }
        try {
            LibC.MapResult r = LibC.mmap(base + from, to - from, LibC.PROT_READ | LibC.PROT_WRITE,
                    LibC.MAP_SHARED | LibC.MAP_FIXED, fd.value(), from);
            if (r.failed()) {
                throw new PoolIoException("cannot map pool " + path + " (bytes " + from + " to " + to + "): "
                        + LibC.strerror(r.errno()));
            }
            if (r.address() != base + from) {
                throw new PoolIoException("pool " + path + " was mapped at " + r.address() + ", not at " + (base + from));
            }
        } finally {
            LibC.close(fd.value());  // the mapping keeps the file; the descriptor is not needed
        }
        mapped = to;
    }

    /** {@return the mapping of the file as it is now; earlier segments stay valid for their length} */
    MemorySegment segment() {
        return MemorySegment.ofAddress(base).reinterpret(mapped, arena, null);
    }

    long mapped() {
        return mapped;
    }

    /** msync(2) of the whole mapping (what {@link MemorySegment#force()} does for a JDK mapping). */
    void sync() {
        LibC.Result r = LibC.msync(base, mapped, LibC.MS_SYNC);
        if (r.failed()) {
            throw new PoolIoException("cannot sync pool " + path + ": " + LibC.strerror(r.errno()));
        }
    }

    /** Invalidates every segment handed out, then unmaps the file and the reservation. */
    @Override
    public void close() {
        arena.close();
        LibC.Result r = LibC.munmap(base, reserved);
        if (r.failed()) {
            throw new PoolIoException("cannot unmap pool " + path + ": " + LibC.strerror(r.errno()));
        }
    }

    private static long roundUp(long bytes) {
        return (bytes + PAGE - 1) / PAGE * PAGE;
    }
}
