package org.gphash.cuda.runtime;

import static jcuda.driver.JCudaDriver.cuMemHostRegister;
import static jcuda.driver.JCudaDriver.cuMemHostUnregister;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import jcuda.CudaException;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;
import org.gphash.persistence.MappingListener;

/**
 * Keeps a pool's mapping registered with CUDA, so kernels address the file's pages directly (on
 * this GPU the device address of registered memory is its host address). Registered in chunks of
 * at most 64 GiB (single registrations of 512 GiB and more fail on r580 drivers), again after each
 * remap, only the new pages after a growth in place, and released before the mapping goes.
 *
 * <p>Only file systems whose pages may be pinned writable can be registered: tmpfs (and the
 * memory-backed hugetlbfs). ext4, xfs and fs-dax refuse long-term writable pins of file pages, so a
 * pool there is refused before anything is done to it.
 */
public final class PoolRegistration implements MappingListener {

    public static final long MAX_CHUNK = 64L << 30;
    private static final long PAGE = 4096;
    private static final Set<String> REGISTRABLE = Set.of("tmpfs", "hugetlbfs", "ramfs");

    public static final String WHERE_GPU_POOLS_LIVE = "GPU pools must live where CUDA can pin file pages writable: "
            + "tmpfs such as /dev/shm (memory: survives the process, not a power cut) or hugetlbfs (the same, with huge "
            + "pages); ext4, xfs and fs-dax are refused by the kernel. Device-dax persistent memory would be durable "
            + "and registrable, but pools on it are not supported yet. For durability, copy a tmpfs pool to disk with "
            + "'gphash snapshot'";

    /**
     * Makes the GPU's context current on the calling thread: the mapping changes on whichever thread
     * grows the pool, which need not be one that entered the engine (the CPU engine's code serving calls
     * while the GPU starts grows the heap on a caller's thread).
     */
    private final Runnable bindContext;
    private long registerNanos;
    private final List<HostPointer> chunks = new ArrayList<>();
    /** Where each registration in {@link #chunks} starts and ends (addresses): a copy must not span two. */
    private final List<long[]> chunkRanges = new ArrayList<>();
    private MemorySegment registered;

    /**
     * Refuses a pool path on a file system CUDA cannot register, naming the file system and where
     * GPU pools can live. Checks the parent directory when the file does not exist yet.
     */
    public static void checkLocation(Path pool) {
        Path probe = Files.exists(pool) ? pool : pool.toAbsolutePath().getParent();
        String type;
        try {
            type = Files.getFileStore(probe).type();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot tell which file system " + pool + " is on: " + e.getMessage(), e);
        }
        if (!REGISTRABLE.contains(type)) {
            throw new IllegalArgumentException("pool " + pool + " is on " + type + ". " + WHERE_GPU_POOLS_LIVE);
        }
    }

    /** @param bindContext makes the GPU's context current on the calling thread */
    public PoolRegistration(Runnable bindContext) {
        this.bindContext = bindContext;
    }

    @Override
    public synchronized void beforeUnmap(MemorySegment old) {
        if (registered != null && registered.address() == old.address()) {
            bindContext.run();
            release();
        }
    }

    @Override
    public synchronized void afterMap(MemorySegment current) {
        bindContext.run();
        register(current);
    }

    /**
     * The pool grew in place (same address): only its new pages are registered, instead of releasing
     * and pinning the whole pool again (what a remap needs, and what made each heap growth cost time
     * in proportion to the pool).
     */
    @Override
    public synchronized void afterGrowInPlace(MemorySegment current, long previousSize) {
        bindContext.run();
        if (registered == null || registered.address() != current.address()) {
            register(current);
            return;
        }
        registerRange(current.address(), pageAlign(previousSize), pageAlign(current.byteSize()));
        registered = current;
    }

    public synchronized void register(MemorySegment mapping) {
        release();
        registerRange(mapping.address(), 0, pageAlign(mapping.byteSize()));
        registered = mapping;
    }

    /**
     * Registers {@code [from, to)} of the mapping at {@code base} in chunks of at most
     * {@link #MAX_CHUNK}. Whole pages (mmap maps whole pages), so that a later range never shares a
     * page with an earlier one.
     */
    private void registerRange(long base, long from, long to) {
        long started = System.nanoTime();
        try {
            for (long off = from; off < to; off += MAX_CHUNK) {
                HostPointer p = new HostPointer(base + off);
                long length = Math.min(MAX_CHUNK, to - off);
                cuMemHostRegister(p, length, 0);
                chunks.add(p);
                chunkRanges.add(new long[] {base + off, base + off + length});
            }
        } catch (CudaException e) {
            release();
            throw new IllegalArgumentException("CUDA cannot register the pool mapping (bytes " + from + " to " + to + "): "
                    + e.getMessage() + ". " + WHERE_GPU_POOLS_LIVE, e);
        } finally {
            registerNanos += System.nanoTime() - started;
        }
    }

    /** {@return the time spent registering so far (the open's, then every growth's)} */
    public synchronized long registerNanos() {
        return registerNanos;
    }

    private static long pageAlign(long bytes) {
        return (bytes + PAGE - 1) / PAGE * PAGE;
    }

    public synchronized void release() {
        for (HostPointer p : chunks) {
            int r = cuMemHostUnregisterQuietly(p);
            if (r != CUresult.CUDA_SUCCESS) {
                // Nothing better to do: the pages stay pinned until the process ends.
                System.err.println("gphash: cuMemHostUnregister failed: " + CUresult.stringFor(r));
            }
        }
        chunks.clear();
        chunkRanges.clear();
        registered = null;
    }

    private static int cuMemHostUnregisterQuietly(HostPointer p) {
        try {
            return cuMemHostUnregister(p);
        } catch (CudaException e) {
            return CUresult.CUDA_ERROR_UNKNOWN;
        }
    }

    /**
     * Copies {@code length} bytes of the pool from {@code offset} into GPU memory at {@code target}, in
     * one copy per registration the range touches: CUDA refuses (CUDA_ERROR_INVALID_VALUE) a copy whose
     * host range spans two registrations, which a pool grown in place has (a level of the index mirror
     * loaded after a resize crossed one).
     */
    public synchronized void copyToDevice(CUdeviceptr target, long offset, long length) {
        long start = deviceBase() + offset;
        long end = start + length;
        for (long from = start, to; from < end; from = to) {
            to = pieceEnd(chunkRanges, from, end);
            cuMemcpyHtoD(target.withByteOffset(from - start), new HostPointer(from), to - from);
        }
    }

    /**
     * Where the piece of a copy of {@code [from, end)} that starts at {@code from} ends: at {@code end}
     * or the end of the registration (one of {@code ranges}, {start, end} addresses) holding
     * {@code from}, whichever comes first.
     */
    public static long pieceEnd(List<long[]> ranges, long from, long end) {
        for (long[] range : ranges) {
            if (from >= range[0] && from < range[1]) {
                return Math.min(end, range[1]);
            }
        }
        throw new IllegalStateException("pool address " + from + " is not registered with CUDA");
    }

    /** The device address of pool offset 0 (the host address: registered memory is addressed as is). */
    public synchronized long deviceBase() {
        if (registered == null) {
            throw new IllegalStateException("the pool is not registered with CUDA");
        }
        return registered.address();
    }
}
