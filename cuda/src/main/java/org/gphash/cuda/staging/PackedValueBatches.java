package org.gphash.cuda.staging;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.cuda.path.BatchPath;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.runtime.PinnedBuffer;

/**
 * Host batches whose values have lengths of their own (a format 3 pool's: {@link Batch#valuesPacked}),
 * the router's {@code PACKED} route: the calling thread lays the batch out before the engine's lock
 * ({@link #stage}: kinds, keys, lengths, and the values packed back to back, in page-locked memory of
 * its own); under the lock each chunk's columns cross the link, a kernel spreads the values into a
 * device-resident batch's column (each value at the start of its place of the value size), and the
 * path's device route ({@link BatchPath#executeOnDevice}) runs the chunk, writing and reading each
 * value at its length into a {@linkplain ResultSlot result slot}; then another kernel packs the values
 * read by the offsets their lengths give, so that only their own bytes come back
 * (pipeline/packed_columns.cuh). For a batch's last chunk that copy back happens after the lock, by the
 * batch's own thread ({@link #finish}), while the next thread's batch runs in another slot; the thread
 * then moves outcomes and values into the result. Chunks run one after another, in batch order, so a
 * later chunk sees what an earlier one wrote, as the pipeline's chunks do.
 *
 * <p>Why through the device route: it takes lengths already (issue 53, step 3b), where the host lanes'
 * staging ({@link HostLane}) copies columns of the value size. Why the host's share outside the lock:
 * 16 threads' batches of 65,536 values of 16 B-4 KiB each held the lock some 9 ms with it inside.
 * Per-operation work is done on Java arrays and moved to and from page-locked memory in bulk, and
 * every buffer grows by doubling, a thread's ahead of the lock where it can: 16 threads' batches of
 * 65,536 gets spent 4 ms of each batch's 5.3 ms under the lock in a loop reading and writing
 * page-locked memory element by element, and in registering buffers grown by a few pages at a time
 * (docs/lab/2026-12-01-packed-route-under-the-lock.md). {@link #run} is called under the engine's
 * lock; {@link #stage} and {@link #finish} by the batch's own thread outside it.
 */
public final class PackedValueBatches implements AutoCloseable {

    /** The most bytes a chunk's column of places of the value size (and its column of values read) takes on the GPU. */
    static final long CHUNK_VALUE_BYTES = 256L << 20;

    /**
     * Chunks whose results may wait at once to be copied back after the lock: each slot holds a column
     * of places of the value size on the GPU (up to {@link #CHUNK_VALUE_BYTES}). A batch under the lock
     * waits for a slot where every one is still being copied back by its thread.
     */
    static final int RESULT_SLOTS = 4;

    /** How long {@link #close} waits for threads still copying their results back, before it leaves their memory be. */
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final CudaRuntime cuda;
    private final int keySize;
    private final int valueSize;
    private final HostStageTimes times;
    /**
     * The mean length of the values read by the chunks run so far (bytes; 0 before the first): how much
     * page-locked memory a thread makes ready for its batch's reads before the lock. Racy by design: a
     * guess, which {@link #copyBack} corrects where it falls short.
     */
    private volatile long meanReadLength;
    /** Each thread's batch laid out for the link, and what came back of it. */
    private final ThreadLocal<Staged> staged = ThreadLocal.withInitial(this::newStaged);
    /** Every thread's, for {@link #close} (their memory is registered with the GPU's context). */
    private final Queue<Staged> everyStaged = new ConcurrentLinkedQueue<>();
    /** A chunk's columns in, under the lock only. */
    private final DeviceBuffer kinds = new DeviceBuffer();
    private final DeviceBuffer keys = new DeviceBuffer();
    private final DeviceBuffer lengths = new DeviceBuffer();
    private final DeviceBuffer offsets = new DeviceBuffer();
    private final DeviceBuffer packed = new DeviceBuffer();
    private final DeviceBuffer values = new DeviceBuffer();
    /** Where a chunk's columns are copied in and spread, under the lock (made with the first batch). */
    private CUstream inStream;
    private final ResultSlot[] slots = new ResultSlot[RESULT_SLOTS];
    private final BlockingQueue<ResultSlot> freeSlots = new ArrayBlockingQueue<>(RESULT_SLOTS);
    private CUfunction spread;
    private CUfunction gather;
    private boolean closed;

    /**
     * Where one chunk's results lie on the GPU until its thread has copied them back: the codes, the
     * values read in places of the value size and their lengths, then those values packed; taken under
     * the lock, given back by whoever copied them (under it, or the batch's thread after it).
     */
    private static final class ResultSlot {
        final DeviceBuffer codes = new DeviceBuffer();
        final DeviceBuffer out = new DeviceBuffer();
        final DeviceBuffer outLengths = new DeviceBuffer();
        final DeviceBuffer lengths = new DeviceBuffer();
        final DeviceBuffer offsets = new DeviceBuffer();
        final DeviceBuffer packed = new DeviceBuffer();
        /** The copies back (made under the lock, with the slot's first use). */
        CUstream stream;

        void close() {
            for (DeviceBuffer b : new DeviceBuffer[] {codes, out, outLengths, lengths, offsets, packed}) {
                b.close();
            }
            if (stream != null) {
                cuStreamDestroy(stream);
                stream = null;
            }
        }
    }

    /**
     * One thread's batch in page-locked memory: {@code in} holds kinds | keys | lengths | offsets |
     * values packed, each column at an 8-byte boundary; {@code back} the codes | lengths read | their
     * offsets, and {@code read} the values read, packed.
     */
    private static final class Staged {
        final PinnedBuffer in = new PinnedBuffer();
        final PinnedBuffer back = new PinnedBuffer();
        final PinnedBuffer read = new PinnedBuffer();
        Batch batch;
        int n;
        long keysAt;
        long lengthsAt;
        long offsetsAt;
        long valuesAt;
        long readBytes;
        /** Staged by {@link #stage} before the lock: its caller copies its last chunk back and moves the results after it. */
        boolean finishLater;
        /** How many operations ran and came back (their results are in {@code back} and {@code read}). */
        int ran;
        /** The last chunk's results, left on the GPU for {@link #finish} (null: none), and which operations they are. */
        ResultSlot pending;
        int pendingFirst;
        int pendingCount;
        /** How many operations the last {@link #readOffsets} found reading a value. */
        int readCount;
        /** The batch's kinds; its values' lengths and offsets (then the codes, lengths and offsets read), as arrays. */
        byte[] kinds = new byte[0];
        byte[] codes = new byte[0];
        int[] lengths = new int[0];
        long[] offsets = new long[0];

        void ensureOperations(int n) {
            if (codes.length < n) {
                int size = Math.max(n, 2 * codes.length);
                kinds = new byte[size];
                codes = new byte[size];
                lengths = new int[size];
                offsets = new long[size];
            }
        }
    }

    private Staged newStaged() {
        Staged s = new Staged();
        everyStaged.add(s);
        return s;
    }

    public PackedValueBatches(CudaRuntime cuda, int keySize, int valueSize, HostStageTimes times) {
        this.cuda = cuda;
        this.times = times;
        this.keySize = keySize;
        this.valueSize = valueSize;
        for (int i = 0; i < RESULT_SLOTS; i++) {
            slots[i] = new ResultSlot();
            freeSlots.add(slots[i]);
        }
    }

    /** The operations a chunk takes at most: its value columns within {@link #CHUNK_VALUE_BYTES}. */
    static int chunkOperations(int valueSize) {
        return (int) Math.max(1, CHUNK_VALUE_BYTES / Math.max(1, valueSize));
    }

    /**
     * Lays {@code batch} out for the link in the calling thread's memory, before the engine's lock; its
     * {@link #run} under the lock then copies it straight to the GPU, and {@link #finish} after the lock
     * moves its results.
     */
    public void stage(Batch batch) {
        long t0 = System.nanoTime();
        layOut(batch).finishLater = true;
        times.add(HostStageTimes.Stage.PACKED_LAY_OUT, System.nanoTime() - t0);
    }

    private Staged layOut(Batch batch) {
        if (!batch.valuesPacked() || batch.hasConditionalOperations()) {
            throw new IllegalArgumentException("the packed route runs batches of plain operations on values of any length");
        }
        Staged s = staged.get();
        int n = batch.size();
        MemorySegment batchValues = batch.values();  // every value back to back: room enough for those the writes carry
        s.batch = batch;
        s.n = n;
        s.keysAt = align(n);
        s.lengthsAt = align(s.keysAt + (long) n * keySize);
        s.offsetsAt = s.lengthsAt + align(4L * n);
        s.valuesAt = s.offsetsAt + 8L * n;
        // Grown by doubling (a few pages more each batch made every batch register memory anew).
        s.in.ensureKeeping(s.valuesAt + batchValues.byteSize(), 0);
        s.back.ensureKeeping(s.valuesAt, 0);  // codes | lengths | offsets: the layout of the columns in, without the values
        if (s.pending != null) {
            throw new IllegalStateException("a thread's packed batch was laid out again before its results were copied back");
        }
        s.ran = 0;
        s.readBytes = 0;
        s.finishLater = false;
        s.ensureOperations(n);
        byte[] kinds = s.kinds;
        int[] lengths = s.lengths;
        long[] offsets = s.offsets;
        MemorySegment.copy(batch.kinds(), ValueLayout.JAVA_BYTE, 0, kinds, 0, n);
        // A batch appends its values in order (Batch.add, PackedValues), so they lie back to back from
        // the first one's offset, an operation without a value taking none: one copy moves them all.
        // Without a branch on the kind: a loop compiled for a run of writes was thrown away at the
        // first batch of gets and ran interpreted until compiled again (a flight recording of bench
        // ycsb, docs/lab/2026-12-01-packed-route-under-the-lock.md).
        long base = n == 0 ? 0 : batch.valueOffset(0);
        long at = 0;
        int reads = 0;
        boolean inOrder = true;
        for (int i = 0; i < n; i++) {
            int kind = kinds[i];
            int length = batch.valueLength(i) & -CARRIES_VALUE[kind];
            inOrder &= batch.valueOffset(i) == base + at;
            reads += READS_VALUE[kind];
            lengths[i] = length;
            offsets[i] = at;
            at += length;
        }
        if (!inOrder) {
            throw new IllegalStateException("a batch's packed values do not lie in the order of its operations");
        }
        MemorySegment h = s.in.segment();
        MemorySegment.copy(batch.kinds(), 0, h, 0, n);
        MemorySegment.copy(batch.keys(), 0, h, s.keysAt, (long) n * keySize);
        MemorySegment.copy(lengths, 0, h, ValueLayout.JAVA_INT_UNALIGNED, s.lengthsAt, n);
        MemorySegment.copy(offsets, 0, h, ValueLayout.JAVA_LONG_UNALIGNED, s.offsetsAt, n);
        MemorySegment.copy(batchValues, base, h, s.valuesAt, at);
        // The values this batch's gets will read, by the mean so far: registered now, not under the lock.
        long mean = meanReadLength;
        if (mean > 0 && reads > 0) {
            s.read.ensureKeeping(reads * Math.min(valueSize, mean + mean / 2), 0);
        }
        return s;
    }

    /** 1 for the kinds that carry a value, by ordinal, else 0. */
    private static final int[] CARRIES_VALUE = new int[OpKind.values().length];
    /** 1 for the kinds that read a value (gets, read-modify-writes), by ordinal, else 0. */
    private static final int[] READS_VALUE = new int[OpKind.values().length];
    /** 1 for the outcome codes that carry a value ({@link #returnsValue}), by code, else 0. */
    private static final int[] RETURNS_VALUE = new int[256];

    static {
        for (OpKind k : OpKind.values()) {
            CARRIES_VALUE[k.ordinal()] = k.hasValue() ? 1 : 0;
            READS_VALUE[k.ordinal()] = k == OpKind.GET || k == OpKind.READ_MODIFY_WRITE ? 1 : 0;
        }
        for (int c = 0; c < 256; c++) {
            RETURNS_VALUE[c] = returnsValue((byte) c) ? 1 : 0;
        }
    }

    /**
     * Runs {@code batch} (packed, plain kinds only) by {@code path}'s device route, under the engine's
     * lock, from the calling thread's {@link #stage} of it, or laid out now where it was not (a segment
     * of a conditional batch, already under the lock: its results are then copied back and go into
     * {@code result} at once). A staged batch's last chunk stays in its result slot for {@link #finish}.
     * A chunk that fails leaves the results of the chunks before it in {@code result}.
     */
    public void run(Batch batch, BatchResult result, BatchPath path) {
        if (spread == null) {
            spread = cuda.function("gphash_packed_spread");
            gather = cuda.function("gphash_packed_gather");
            CUstream st = new CUstream();
            cuStreamCreate(st, CUstream_flags.CU_STREAM_NON_BLOCKING);
            inStream = st;
        }
        Staged s = staged.get();
        if (s.batch != batch || s.ran > 0) {
            s = layOut(batch);
        }
        ResultSlot slot = takeSlot();
        boolean handedOn = false;
        try {
            int chunk = chunkOperations(valueSize);
            for (int first = 0; first < s.n; first += chunk) {
                int m = Math.min(chunk, s.n - first);
                runChunk(s, path, first, m, slot);
                if (first + m == s.n && s.finishLater) {
                    s.pending = slot;
                    s.pendingFirst = first;
                    s.pendingCount = m;
                    handedOn = true;
                } else {
                    copyBack(s, slot, first, m);  // the slot is needed for the next chunk
                }
            }
        } catch (RuntimeException | Error e) {
            moveResults(s, result);
            throw e;
        } finally {
            if (!handedOn) {
                freeSlots.add(slot);
            }
        }
        if (!s.finishLater) {
            moveResults(s, result);
        }
    }

    /**
     * After the lock: copies back the last chunk's results of the batch this thread staged and ran,
     * gives its slot back, and moves every result into {@code result}.
     */
    public void finish(Batch batch, BatchResult result) {
        Staged s = staged.get();
        if (s.batch != batch || !s.finishLater) {
            return;
        }
        ResultSlot slot = s.pending;
        if (slot != null) {
            s.pending = null;
            try {
                copyBack(s, slot, s.pendingFirst, s.pendingCount);
            } catch (RuntimeException | Error e) {
                moveResults(s, result);  // the chunks before it
                throw e;
            } finally {
                freeSlots.add(slot);
            }
        }
        long t0 = System.nanoTime();
        moveResults(s, result);
        times.add(HostStageTimes.Stage.PACKED_FINISH, System.nanoTime() - t0);
    }

    /** A free result slot, waiting (under the lock) for a thread copying its results back after it to give one back. */
    private ResultSlot takeSlot() {
        ResultSlot slot = freeSlots.poll();
        boolean interrupted = false;
        while (slot == null) {
            try {
                slot = freeSlots.take();
            } catch (InterruptedException e) {
                interrupted = true;  // the copy back that frees a slot is short: finish the batch, then say so
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (slot.stream == null) {
            CUstream st = new CUstream();
            cuStreamCreate(st, CUstream_flags.CU_STREAM_NON_BLOCKING);
            slot.stream = st;
        }
        return slot;
    }

    /** Under the lock: copies operations first..first+m-1 in and runs them on the GPU, their results into {@code slot}. */
    private void runChunk(Staged s, BatchPath path, int first, int m, ResultSlot slot) {
        long t0 = System.nanoTime();
        // The arrays still hold the batch's kinds, lengths and offsets from this chunk on (the chunks
        // before it put their codes and lengths read there). The chunk's values lie together: from its
        // first operation's offset to its last one's end.
        int last = first + m - 1;
        long valuesFrom = s.offsets[first];
        long chunkValues = s.offsets[last] + s.lengths[last] - valuesFrom;
        long keyBytes = (long) m * keySize;
        long columnBytes = (long) m * valueSize;
        kinds.ensure(m);
        keys.ensure(keyBytes);
        lengths.ensure(4L * m);
        offsets.ensure(8L * m);
        slot.codes.ensure(m);
        slot.out.ensure(columnBytes);
        slot.outLengths.ensure(4L * m);
        cuMemcpyHtoDAsync(kinds.pointer(), s.in.at(first), m, inStream);
        cuMemcpyHtoDAsync(keys.pointer(), s.in.at(s.keysAt + (long) first * keySize), keyBytes, inStream);
        cuMemcpyHtoDAsync(lengths.pointer(), s.in.at(s.lengthsAt + 4L * first), 4L * m, inStream);
        boolean carriesValues = false;  // a write of an empty value carries one too: the route gets a column
        for (int j = first; j <= last && !carriesValues; j++) {
            carriesValues = CARRIES_VALUE[s.kinds[j]] != 0;
        }
        if (carriesValues) {
            values.ensure(columnBytes);
        }
        if (chunkValues > 0) {
            ensureDoubling(packed, chunkValues);
            cuMemcpyHtoDAsync(offsets.pointer(), s.in.at(s.offsetsAt + 8L * first), 8L * m, inStream);
            cuMemcpyHtoDAsync(packed.pointer(), s.in.at(s.valuesAt + valuesFrom), chunkValues, inStream);
            // The chunk's offsets count from the batch's first value: the kernel's base is moved back by as much.
            Launcher.launch(spread, (long) m * 32, inStream, KernelParams.packedColumn(m, packed.address() - valuesFrom,
                    offsets.address(), lengths.address(), values.address(), valueSize));
        }
        cuStreamSynchronize(inStream);  // the device route runs on the engine's stream
        long t1 = System.nanoTime();
        times.add(HostStageTimes.Stage.PACKED_IN, t1 - t0);
        path.executeOnDevice(m, kinds.address(), keys.address(), carriesValues ? values.address() : 0,
                lengths.address(), slot.codes.address(), slot.out.address(), slot.outLengths.address());
        times.add(HostStageTimes.Stage.PACKED_RUN, System.nanoTime() - t1);
    }

    /**
     * Copies back operations first..first+m-1's results from {@code slot} (the device route has run
     * them): codes | lengths read | their offsets among the values read, then the values read, packed
     * on the GPU. By the slot's holder: under the lock, or the batch's own thread after it.
     */
    private void copyBack(Staged s, ResultSlot slot, int first, int m) {
        long t0 = System.nanoTime();
        CUstream st = slot.stream;
        MemorySegment back = s.back.segment();
        long codesAt = first;
        long readLengthsAt = s.lengthsAt + 4L * first;
        long readOffsetsAt = s.offsetsAt + 8L * first;
        cuMemcpyDtoHAsync(s.back.at(codesAt), slot.codes.pointer(), m, st);
        cuMemcpyDtoHAsync(s.back.at(readLengthsAt), slot.outLengths.pointer(), 4L * m, st);
        cuStreamSynchronize(st);
        MemorySegment.copy(back, ValueLayout.JAVA_BYTE, codesAt, s.codes, first, m);
        MemorySegment.copy(back, ValueLayout.JAVA_INT_UNALIGNED, readLengthsAt, s.lengths, first, m);
        long chunkRead = readOffsets(s, first, first + m, s.readBytes) - s.readBytes;
        if (chunkRead > 0) {
            // The gather's lengths and offsets cross from page-locked memory.
            MemorySegment.copy(s.lengths, first, back, ValueLayout.JAVA_INT_UNALIGNED, readLengthsAt, m);
            MemorySegment.copy(s.offsets, first, back, ValueLayout.JAVA_LONG_UNALIGNED, readOffsetsAt, m);
            s.read.ensureKeeping(s.readBytes + chunkRead, s.readBytes);  // made ready before the lock, as a rule
            ensureDoubling(slot.packed, chunkRead);
            slot.lengths.ensure(4L * m);
            slot.offsets.ensure(8L * m);
            cuMemcpyHtoDAsync(slot.lengths.pointer(), s.back.at(readLengthsAt), 4L * m, st);
            cuMemcpyHtoDAsync(slot.offsets.pointer(), s.back.at(readOffsetsAt), 8L * m, st);
            Launcher.launch(gather, (long) m * 32, st, KernelParams.packedColumn(m, slot.packed.address() - s.readBytes,
                    slot.offsets.address(), slot.lengths.address(), slot.out.address(), valueSize));
            cuMemcpyDtoHAsync(s.read.at(s.readBytes), slot.packed.pointer(), chunkRead, st);
            cuStreamSynchronize(st);
            s.readBytes += chunkRead;
            long mean = meanReadLength;
            long got = chunkRead / Math.max(1, s.readCount);
            meanReadLength = mean == 0 ? got : (3 * mean + got) / 4;
        }
        s.ran = first + m;
        times.add(HostStageTimes.Stage.PACKED_BACK, System.nanoTime() - t0);
    }

    /**
     * Operations {@code from..to-1}'s lengths read (0 where an operation read nothing, by its code) and
     * their offsets among the values read, counting from {@code at}, in {@code s}'s arrays; {@return the
     * offset past the last}. A method of its own, so that the compiler takes it whole early.
     */
    private static long readOffsets(Staged s, int from, int to, long at) {
        byte[] codes = s.codes;
        int[] lengths = s.lengths;
        long[] offsets = s.offsets;
        int count = 0;
        for (int j = from; j < to; j++) {  // without a branch on the code, as layOut's loop
            int returns = RETURNS_VALUE[codes[j] & 0xFF];
            int length = lengths[j] & -returns;
            count += returns;
            lengths[j] = length;
            offsets[j] = at;
            at += length;
        }
        s.readCount = count;
        return at;
    }

    /** The outcomes of the operations that ran, and the values they read, into {@code result}. */
    private static void moveResults(Staged s, BatchResult result) {
        int ran = s.ran;
        MemorySegment back = s.back.segment();
        MemorySegment read = s.read.segment();
        // copyBack left each operation's code, length read (0 where none) and offset in the arrays.
        byte[] codes = s.codes;
        int[] lengths = s.lengths;
        MemorySegment.copy(back, 0, result.outcomeCodes(), 0, ran);
        if (result.valuesPacked() && s.readBytes > 0) {
            // The values read lie in operation order: one copy, then each operation takes its share.
            long to = result.reserveValue(Math.toIntExact(s.readBytes));
            MemorySegment.copy(read, 0, result.valueBlock(), to, s.readBytes);
            for (int i = 0; i < ran; i++) {
                if (returnsValue(codes[i])) {
                    result.commitValue(i, lengths[i]);
                }
            }
        } else {
            long[] offsets = s.offsets;
            for (int i = 0; i < ran; i++) {
                if (returnsValue(codes[i])) {
                    int length = lengths[i];
                    result.putValue(i, length == 0 ? back : read, length == 0 ? 0 : offsets[i], length);
                }
            }
        }
        s.finishLater = false;
    }

    /** Grows {@code b} to at least {@code bytes}, by doubling (a free of device memory waits for the whole GPU). */
    private static void ensureDoubling(DeviceBuffer b, long bytes) {
        if (bytes > b.capacity()) {
            b.ensure(Math.max(bytes, 2 * b.capacity()));
        }
    }

    /** Whether an outcome carries a value (a get that found its key, a read-modify-write that replaced one). */
    private static boolean returnsValue(byte code) {
        return code == Outcome.FOUND.code() || code == Outcome.REPLACED.code();
    }

    private static long align(long at) {
        return (at + 7) & ~7L;
    }

    /**
     * Frees what this holds on the GPU and in page-locked memory, once every thread copying its
     * results back after the lock has given its slot back (their copies write the threads' page-locked
     * memory); a thread that has not within {@link #CLOSE_WAIT_NANOS} keeps its memory, leaked rather
     * than freed under a copy.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        int returned = 0;
        boolean interrupted = false;
        while (returned < RESULT_SLOTS) {
            ResultSlot slot;
            try {
                slot = freeSlots.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
                break;
            }
            if (slot == null) {
                break;
            }
            slot.close();
            returned++;
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        for (DeviceBuffer b : new DeviceBuffer[] {kinds, keys, lengths, offsets, packed, values}) {
            b.close();
        }
        if (inStream != null) {
            cuStreamDestroy(inStream);
            inStream = null;
        }
        if (returned < RESULT_SLOTS) {
            return;
        }
        for (Staged s; (s = everyStaged.poll()) != null;) {
            s.in.close();
            s.back.close();
            s.read.close();
        }
    }
}
