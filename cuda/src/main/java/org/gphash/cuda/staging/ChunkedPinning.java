package org.gphash.cuda.staging;

import static jcuda.driver.JCudaDriver.cuMemHostRegister;
import static jcuda.driver.JCudaDriver.cuMemHostUnregister;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.gphash.Batch;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.HostPointer;

/**
 * Pins a batch's block with CUDA a chunk at a time, as the engine queues its chunks, instead of all
 * of it before the first one: each chunk's pages are registered while the GPU runs the chunks before
 * it. A load of 16M keys in fresh batches of 2^20 (137 MiB each) spent 38-41% of its host time
 * registering each block whole before its first chunk could start, with the GPU idle (H200,
 * docs/PERFORMANCE.md). Registrations never overlap (CUDA refuses a page registered twice): each
 * registers only the whole pages of its range that no earlier one covered. {@link #complete} then
 * registers the rest of the block, so that the block is pinned whole for its later runs, as
 * {@link BatchPinning} pins it. The block counts as pinned from {@link #begin} on; its unpinning
 * releases whatever was registered. Under the engine's lock, or by the one thread preparing the
 * batch before it.
 */
public final class ChunkedPinning {

    private static final long PAGE = 4096;

    private final CudaRuntime cuda;
    private final long blockStart;
    private final long blockEnd;
    private final long kinds;
    private final long keys;
    private final long values;
    private final int keySize;
    private final int valueSize;
    private final boolean withValues;
    /** Registered page ranges, start to end: never overlapping, merged only in this bookkeeping. */
    private final TreeMap<Long, Long> registered = new TreeMap<>();
    /** Each registration, as CUDA knows it (unregistered one by one). */
    private final List<long[]> registrations = new ArrayList<>();
    private long registeredBytes;

    private ChunkedPinning(CudaRuntime cuda, Batch batch, boolean withValues) {
        this.cuda = cuda;
        this.blockStart = batch.memory().segment().address();
        this.blockEnd = blockStart + batch.memory().segment().byteSize();
        this.kinds = batch.kinds().address();
        this.keys = batch.keys().address();
        this.values = batch.values().address();
        this.keySize = batch.keySize();
        this.valueSize = batch.valueSize();
        this.withValues = withValues;
    }

    /**
     * Starts pinning {@code batch}'s block (not pinned yet): records it as pinned, with an unpinning
     * that releases whatever gets registered, and registers the pages of operations {@code 0..ops}.
     * {@code withValues}: the value column is registered with each chunk (else only by
     * {@link #complete}). Throws what CUDA throws, with nothing left registered.
     */
    public static ChunkedPinning begin(Batch batch, CudaRuntime cuda, boolean withValues, int ops) {
        ChunkedPinning p = new ChunkedPinning(cuda, batch, withValues);
        try {
            p.through(ops);
        } catch (RuntimeException e) {
            p.releaseAll();
            throw e;
        }
        batch.memory().pin(p::releaseAll);
        return p;
    }

    /** Registers the pages of operations {@code 0..ops} of each column that are not registered yet. */
    public void through(int ops) {
        cover(kinds, kinds + ops);
        cover(keys, keys + (long) ops * keySize);
        if (withValues) {
            cover(values, values + (long) ops * valueSize);
        }
    }

    /** Registers every page of the block not registered yet: the block is then pinned whole. */
    public void complete() {
        cover(blockStart, blockEnd);
    }

    /** {@return the bytes registered so far} */
    public long registeredBytes() {
        return registeredBytes;
    }

    /** Registers the gaps of [from, to), widened to whole pages, that no registration covers. */
    private void cover(long from, long to) {
        for (long[] gap : gaps(registered, from, to, blockStart, blockEnd)) {
            register(gap[0], gap[1]);
        }
    }

    /**
     * The page ranges of [from, to), widened to whole pages and clipped to the block, that none of
     * {@code registered} (start to end, page-aligned, not overlapping) covers, in address order.
     */
    static List<long[]> gaps(TreeMap<Long, Long> registered, long from, long to, long blockStart, long blockEnd) {
        List<long[]> gaps = new ArrayList<>();
        long at = Math.max(blockStart, from / PAGE * PAGE);
        long end = Math.min(blockEnd, (to + PAGE - 1) / PAGE * PAGE);
        while (at < end) {
            Map.Entry<Long, Long> before = registered.floorEntry(at);
            if (before != null && before.getValue() > at) {
                at = before.getValue();  // inside a registered range: on from its end
                continue;
            }
            Long next = registered.higherKey(at);
            long gapEnd = next == null ? end : Math.min(end, next);
            gaps.add(new long[] {at, gapEnd});
            at = gapEnd;
        }
        return gaps;
    }

    /** Records [from, to) in {@code registered}, merged with a neighbouring range it touches. */
    static void record(TreeMap<Long, Long> registered, long from, long to) {
        long start = from;
        long end = to;
        Map.Entry<Long, Long> before = registered.floorEntry(from);
        if (before != null && before.getValue() == from) {
            start = before.getKey();
            registered.remove(start);
        }
        Long after = registered.get(to);
        if (after != null) {
            registered.remove(to);
            end = after;
        }
        registered.put(start, end);
    }

    private void register(long from, long to) {
        cuMemHostRegister(new HostPointer(from), to - from, 0);
        registrations.add(new long[] {from, to});
        registeredBytes += to - from;
        record(registered, from, to);
    }

    /** Unregisters every registration (the block's unpinning; the cleaner's thread binds the context). */
    private void releaseAll() {
        cuda.bind();
        RuntimeException failed = null;
        for (long[] r : registrations) {
            try {
                cuMemHostUnregister(new HostPointer(r[0]));
            } catch (RuntimeException e) {
                failed = failed == null ? e : failed;
            }
        }
        registrations.clear();
        registered.clear();
        if (failed != null) {
            throw failed;
        }
    }
}
