package org.gphash.cuda.staging;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;
import static jcuda.driver.JCudaDriver.cuStreamWaitEvent;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;

/**
 * One chunk of a host batch on its way through the GPU: pinned staging memory and device buffers for
 * its kinds, keys, values, codes and values out. The engine keeps {@link org.gphash.cuda.pipeline.MirrorPath#LANES}, taken in a
 * ring by every thread's chunks, so that the copies of one
 * chunk (in and out) overlap the GPU's work on the other: a lane copies in on a stream of its own and
 * copies out on another, tied to the engine's stream by events (the kernels of a chunk wait for its
 * copy in; its copy out waits for its kernels), so that one chunk's results cross the link while the
 * next chunk's kernels run and the one after that is copied in (PCIe carries both directions at once).
 * A batch or result whose own memory is pinned ({@link BatchPinning}) skips the staging memory,
 * and a chunk of ungrouped reads into a pinned result has no values to copy out at all: its kernels
 * write them into the result through the mapping ({@code MirrorPath.execute}). A chunk of a shard's
 * part of a caller's batch ({@link #stagePart}) is gathered from the caller's pinned columns by a
 * kernel and its results scattered back to their positions by another: no host copy either way.
 * Not thread-safe.
 */
public final class HostLane implements AutoCloseable {

    private final int keySize;
    private final int valueSize;
    /** The chunk's columns in (kinds, keys, values) and out (codes, values read). */
    public final StagedBuffer kinds = new StagedBuffer();
    public final StagedBuffer keys = new StagedBuffer();
    public final StagedBuffer values = new StagedBuffer();
    public final StagedBuffer codes = new StagedBuffer();
    public final StagedBuffer out = new StagedBuffer();
    /** A part's chunk: its operations' positions in the caller's batch (device side, copied from pinned memory). */
    public final StagedBuffer positions = new StagedBuffer();
    /** A part's chunk: the range of the caller's kinds and keys it spans, copied to the device to gather from. */
    private final StagedBuffer rangeKinds = new StagedBuffer();
    private final StagedBuffer rangeKeys = new StagedBuffer();
    private final CUevent done = new CUevent();
    /**
     * Recorded with {@link #done}, for waits outside the engine's lock: its waiters sleep in the driver
     * instead of spinning (the context spins by default: 15 threads spinning on a 16-core machine slowed
     * the lock holder's staging and queueing).
     */
    private final CUevent doneAsleep = new CUevent();
    /** The chunk's copy in is done (on {@link #uploads}); its kernels are done (on the engine's stream). */
    private final CUevent staged = new CUevent();
    private final CUevent ran = new CUevent();
    private final CUstream uploads = new CUstream();
    private final CUstream downloads = new CUstream();
    /** Where the chunk's marks go when timing is on; the marks themselves, made the first time it is. */
    private final ChunkTimeline timeline;
    private CUevent[] marks;
    /** Whether the chunk in flight recorded its marks (timing was on when it was queued). */
    private boolean marked;

    /** The chunk in flight: its first operation in the batch, its size, what it does; ticket null when idle. */
    public int first;
    public int n;
    boolean reads;
    public long valueWrites;
    public PipelineTicket ticket;
    /** The chunk's place in the queue of all chunks (the batch it belongs to is the ring's to know). */
    public long queued;
    /** The result the chunk's results were copied into directly, or null when they come through the lane. */
    private BatchResult directResult;
    /** The positions of the part the chunk in flight belongs to (its operation i is at positions[first + i]), or null. */
    private MemorySegment partPositions;

    public HostLane(int keySize, int valueSize, ChunkTimeline timeline) {
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.timeline = timeline;
        cuEventCreate(done, CUevent_flags.CU_EVENT_DEFAULT);
        cuEventCreate(doneAsleep, CUevent_flags.CU_EVENT_BLOCKING_SYNC | CUevent_flags.CU_EVENT_DISABLE_TIMING);
        cuEventCreate(staged, CUevent_flags.CU_EVENT_DISABLE_TIMING);
        cuEventCreate(ran, CUevent_flags.CU_EVENT_DISABLE_TIMING);
        cuStreamCreate(uploads, CUstream_flags.CU_STREAM_NON_BLOCKING);
        cuStreamCreate(downloads, CUstream_flags.CU_STREAM_NON_BLOCKING);
    }

    /**
     * Queues operations first..first+n of {@code batch} to the GPU, straight from {@code direct} (the
     * batch's pinned memory, or the pinned copy its calling thread made, values included where it
     * copied them) where given, else through this lane's pinned staging memory, on the lane's upload
     * stream; work queued on {@code compute} after this waits for the copy. {@code withReads}: the
     * chunk's values read come back through this lane (false when the kernels write them into a
     * pinned result themselves). {@code after}: the lane of the chunk queued before, whose copy in
     * this one's waits for (null: none).
     */
    public void stage(CUstream compute, Batch batch, int first, int n, boolean withValues, boolean withReads, HostColumns direct,
               HostLane after) {
        begin(after, first, n, withReads, null);
        long keyBytes = (long) n * keySize;
        long valueBytes = (long) n * valueSize;
        codes.ensure(n);
        if (withReads) {
            out.ensure(valueBytes);
        }
        if (direct != null) {
            kinds.ensureDevice(n).copyInFrom(direct.kinds() + first, n, uploads);
            keys.ensureDevice(keyBytes).copyInFrom(direct.keys() + (long) first * keySize, keyBytes, uploads);
        } else {
            MemorySegment.copy(batch.kinds(), first, kinds.ensure(n).host(), 0, n);
            ParallelCopy.copy(batch.keys(), (long) first * keySize, keys.ensure(keyBytes).host(), 0, keyBytes);
            kinds.copyIn(n, uploads);
            keys.copyIn(keyBytes, uploads);
        }
        if (withValues && direct != null && direct.values() != 0) {
            values.ensureDevice(valueBytes).copyInFrom(direct.values() + (long) first * valueSize, valueBytes, uploads);
        } else if (withValues) {
            ParallelCopy.copy(batch.values(), (long) first * valueSize, values.ensure(valueBytes).host(), 0, valueBytes);
            values.copyIn(valueBytes, uploads);
        }
        staged(compute);
    }

    /** Takes a chunk: after {@code after}'s copy in (null: none), operations first..first+n, of a part at {@code partPositions} or not. */
    private void begin(HostLane after, int first, int n, boolean withReads, MemorySegment partPositions) {
        if (after != null && after != this) {
            // Copies in go in chunk order: issued side by side on the lanes' streams, several chunks
            // shared the link and the first one's kernels started late.
            cuStreamWaitEvent(uploads, after.staged, 0);
        }
        marked = timeline.on();
        if (marked && marks == null) {
            marks = ChunkTimeline.newMarks();
        }
        mark(ChunkTimeline.COPY_IN_BEGIN, uploads);
        this.first = first;
        this.n = n;
        this.reads = withReads;
        this.directResult = null;
        this.partPositions = partPositions;
    }

    /** The chunk is staged (on the upload stream): work queued on {@code compute} after this waits for it. */
    private void staged(CUstream compute) {
        mark(ChunkTimeline.COPY_IN_END, uploads);
        cuEventRecord(staged, uploads);
        cuStreamWaitEvent(compute, staged, 0);
        mark(ChunkTimeline.KERNELS_BEGIN, compute);
    }

    /**
     * Queues positions first..first+n of a shard's part of {@code batch} ({@code positions}: 4-byte
     * ints in pinned memory) to the GPU: the positions and the range of the batch's kinds and keys
     * they span are copied in, then {@code gather} copies each operation's kind and key from that
     * range (and its value, where it carries one and {@code withValues}, from the batch's pinned values
     * through the mapping) into the lane's device buffers, on the lane's upload stream.
     * {@code withReads}: the chunk's values read come back through the lane (scattered by
     * {@link #queueResultsScattered}; false when the read stage writes them at their positions itself).
     * As {@link #stage} otherwise.
     */
    public void stagePart(CUstream compute, Batch batch, MemorySegment positions, int first, int n, boolean withValues,
                          boolean withReads, CUfunction gather, HostLane after) {
        begin(after, first, n, withReads, positions);
        long positionBytes = 4L * n;
        this.positions.ensureDevice(positionBytes).copyInFrom(positions.address() + 4L * first, positionBytes, uploads);
        long base = positions.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, first);
        long span = positions.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, first + n - 1) - base + 1;
        rangeKinds.ensureDevice(span).copyInFrom(batch.kinds().address() + base, span, uploads);
        rangeKeys.ensureDevice(span * keySize).copyInFrom(batch.keys().address() + base * keySize, span * keySize, uploads);
        kinds.ensureDevice(n);
        keys.ensureDevice((long) n * keySize);
        codes.ensureDevice(n);
        if (withValues) {
            values.ensureDevice((long) n * valueSize);
        }
        if (withReads) {
            out.ensureDevice((long) n * valueSize);
        }
        Launcher.launch(gather, n, uploads, KernelParams.partGather(n, this.positions.deviceAddress(), base,
                rangeKinds.deviceAddress(), rangeKeys.deviceAddress(), withValues ? batch.values().address() : 0,
                kinds.deviceAddress(), keys.deviceAddress(), withValues ? values.deviceAddress() : 0, keySize, valueSize));
        staged(compute);
    }

    /**
     * Stages the listed operations of {@code batch}, packed (a rerun of the few operations a resize
     * held back); the lane's operation i is the batch's ops[i].
     */
    public void stagePacked(CUstream stream, Batch batch, int[] ops) {
        int n = ops.length;
        this.first = -1;
        this.n = n;
        this.reads = true;
        this.directResult = null;
        this.partPositions = null;
        this.marked = false;  // a rerun is not timed
        kinds.ensure(n);
        keys.ensure((long) n * keySize);
        values.ensure((long) n * valueSize);
        codes.ensure(n);
        out.ensure((long) n * valueSize);
        for (int i = 0; i < n; i++) {
            int op = ops[i];
            kinds.host().set(ValueLayout.JAVA_BYTE, i, batch.kinds().get(ValueLayout.JAVA_BYTE, op));
            MemorySegment.copy(batch.keys(), (long) op * keySize, keys.host(), (long) i * keySize, keySize);
            MemorySegment.copy(batch.values(), (long) op * valueSize, values.host(), (long) i * valueSize, valueSize);
        }
        kinds.copyIn(n, stream);
        keys.copyIn((long) n * keySize, stream);
        values.copyIn((long) n * valueSize, stream);
    }

    /**
     * Queues the copies of the results back into the lane's pinned memory, on the lane's download
     * stream, after what is already queued on {@code compute}.
     */
    public void queueResults(CUstream compute) {
        afterKernels(compute);
        codes.copyOut(n, downloads);
        if (reads) {
            out.copyOut((long) n * valueSize, downloads);
        }
        recordDone();
    }

    private void recordDone() {
        mark(ChunkTimeline.COPY_OUT_END, downloads);
        cuEventRecord(done, downloads);
        cuEventRecord(doneAsleep, downloads);
    }

    /** Makes the download stream wait for what is queued on {@code compute} (the chunk's kernels). */
    private void afterKernels(CUstream compute) {
        mark(ChunkTimeline.KERNELS_END, compute);
        cuEventRecord(ran, compute);
        cuStreamWaitEvent(downloads, ran, 0);
        mark(ChunkTimeline.COPY_OUT_BEGIN, downloads);
    }

    /**
     * Queues the copies of the results straight into {@code result} at the chunk's place, whose memory
     * is pinned, after what is already queued ({@link #copyResults} then has nothing to do).
     */
    public void queueResultsInto(CUstream compute, BatchResult result) {
        directResult = result;
        afterKernels(compute);
        codes.copyOutTo(result.outcomeCodes().address() + first, n, downloads);
        if (reads) {
            out.copyOutTo(result.values().address() + (long) first * valueSize, (long) n * valueSize, downloads);
        }
        recordDone();
    }

    /**
     * For a part's chunk ({@link #stagePart}): queues {@code scatter}, which writes each operation's
     * outcome (and the value it found or replaced) to its position of {@code result}, whose memory is
     * pinned, through the mapping, on the lane's download stream after what is queued on
     * {@code compute}.
     */
    public void queueResultsScattered(CUstream compute, BatchResult result, CUfunction scatter) {
        directResult = result;
        afterKernels(compute);
        Launcher.launch(scatter, n, downloads, KernelParams.partScatter(n, positions.deviceAddress(), codes.deviceAddress(),
                reads ? out.deviceAddress() : 0, result.outcomeCodes().address(), result.values().address(), valueSize));
        recordDone();
    }

    /** Records mark {@code which} of the chunk on {@code stream}, when it is timed. */
    private void mark(int which, CUstream stream) {
        if (marked) {
            cuEventRecord(marks[which], stream);
        }
    }

    /** After {@link #awaitResults}: adds the chunk's marks to the timeline, when it was timed. */
    public void addToTimeline() {
        if (marked) {
            marked = false;
            timeline.add(marks);
        }
    }

    /** Waits for the results queued last. */
    public void awaitResults() {
        cuEventSynchronize(done);
    }

    /** Waits for the results queued last, asleep (outside the engine's lock). */
    public void awaitResultsAsleep() {
        cuEventSynchronize(doneAsleep);
    }

    /** The position in its batch of the lane's operation i (a part's chunk: where the part lists it). */
    public int operation(int i) {
        return partPositions != null ? partPositions.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, first + i) : first + i;
    }

    /** The outcome code of the lane's operation i (after awaitResults). */
    public int code(int i) {
        if (directResult != null) {
            return directResult.outcomeCodes().get(ValueLayout.JAVA_BYTE, operation(i));
        }
        return codes.host().get(ValueLayout.JAVA_BYTE, i);
    }

    /** Moves the chunk's results into {@code result} at the chunk's place. */
    public void copyResults(BatchResult result) {
        if (directResult != null) {
            return;
        }
        MemorySegment.copy(codes.host(), 0, result.outcomeCodes(), first, n);
        if (reads) {
            ParallelCopy.copy(out.host(), 0, result.values(), (long) first * valueSize, (long) n * valueSize);
        }
    }

    /** Moves a packed rerun's results to the operations they belong to. */
    public void scatterResults(BatchResult result, int[] ops) {
        for (int i = 0; i < ops.length; i++) {
            result.outcomeCodes().set(ValueLayout.JAVA_BYTE, ops[i], codes.host().get(ValueLayout.JAVA_BYTE, i));
            MemorySegment.copy(out.host(), (long) i * valueSize, result.values(), (long) ops[i] * valueSize, valueSize);
        }
    }

    @Override
    public void close() {
        for (StagedBuffer c : new StagedBuffer[] {kinds, keys, values, codes, out, positions, rangeKinds, rangeKeys}) {
            c.close();
        }
        cuStreamSynchronize(uploads);
        cuStreamSynchronize(downloads);
        cuEventDestroy(done);
        cuEventDestroy(doneAsleep);
        cuEventDestroy(staged);
        cuEventDestroy(ran);
        ChunkTimeline.destroy(marks);
        cuStreamDestroy(uploads);
        cuStreamDestroy(downloads);
    }
}
