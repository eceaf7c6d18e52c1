package org.gphash.cuda.staging;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import jcuda.driver.CUfunction;
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
 * device-resident batch's column (each value at the start of its place of the value size), the path's
 * device route ({@link BatchPath#executeOnDevice}) runs the chunk, writing and reading each value at
 * its length, and another kernel packs the values read by the offsets their lengths give, so that only
 * their own bytes come back (pipeline/packed_columns.cuh); after the lock the thread moves outcomes and
 * values into the result ({@link #finish}). Chunks run one after another, in batch order, so a later
 * chunk sees what an earlier one wrote, as the pipeline's chunks do.
 *
 * <p>Why through the device route: it takes lengths already (issue 53, step 3b), where the host lanes'
 * staging ({@link HostLane}) copies columns of the value size. Why the host's share outside the lock:
 * 16 threads' batches of 65,536 values of 16 B-4 KiB each held the lock some 9 ms with it inside.
 * {@link #run} is called under the engine's lock; {@link #stage} and {@link #finish} by the batch's
 * own thread outside it.
 *
 * <p>Per-operation work is done on Java arrays and moved to and from page-locked memory in bulk, and
 * every buffer grows by doubling, its thread's ahead of the lock where it can: a run of 16 threads'
 * batches of 65,536 gets spent 4 ms of each batch's 5.3 ms under the lock in a loop reading and
 * writing page-locked memory element by element, and in registering buffers grown by a few pages at a
 * time (docs/lab/2026-12-02-packed-route-under-the-lock.md).
 */
public final class PackedValueBatches implements AutoCloseable {

    /** The most bytes a chunk's column of places of the value size (and its column of values read) takes on the GPU. */
    static final long CHUNK_VALUE_BYTES = 256L << 20;

    private final CudaRuntime cuda;
    private final int keySize;
    private final int valueSize;
    private final HostStageTimes times;
    /**
     * The mean length of the values read by the chunks run so far (bytes; 0 before the first): how much
     * page-locked memory a thread makes ready for its batch's reads before the lock. Racy by design: a
     * guess, which {@link #runChunk} corrects under the lock where it falls short.
     */
    private volatile long meanReadLength;
    /** Each thread's batch laid out for the link, and what came back of it. */
    private final ThreadLocal<Staged> staged = ThreadLocal.withInitial(this::newStaged);
    /** Every thread's, for {@link #close} (their memory is registered with the GPU's context). */
    private final Queue<Staged> everyStaged = new ConcurrentLinkedQueue<>();
    private final DeviceBuffer kinds = new DeviceBuffer();
    private final DeviceBuffer keys = new DeviceBuffer();
    private final DeviceBuffer lengths = new DeviceBuffer();
    private final DeviceBuffer offsets = new DeviceBuffer();
    private final DeviceBuffer packed = new DeviceBuffer();
    private final DeviceBuffer values = new DeviceBuffer();
    private final DeviceBuffer codes = new DeviceBuffer();
    private final DeviceBuffer out = new DeviceBuffer();
    private final DeviceBuffer outLengths = new DeviceBuffer();
    private CUfunction spread;
    private CUfunction gather;

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
        /** Staged by {@link #stage} before the lock: its caller moves the results after it. */
        boolean finishLater;
        /** How many operations ran (their results are in {@code back} and {@code read}). */
        int ran;
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
        s.ran = 0;
        s.readBytes = 0;
        s.finishLater = false;
        s.ensureOperations(n);
        byte[] kinds = s.kinds;
        int[] lengths = s.lengths;
        long[] offsets = s.offsets;
        MemorySegment.copy(batch.kinds(), ValueLayout.JAVA_BYTE, 0, kinds, 0, n);
        // A batch appends its values in order (Batch.add, PackedValues), so they lie back to back from
        // the first one's offset: one copy moves them all.
        long base = n == 0 ? 0 : batch.valueOffset(0);
        long at = 0;
        int reads = 0;
        boolean inOrder = true;
        for (int i = 0; i < n; i++) {
            int length = 0;
            byte kind = kinds[i];
            if (CARRIES_VALUE[kind]) {
                length = batch.valueLength(i);
                inOrder &= batch.valueOffset(i) == base + at;
            }
            if (kind == GET || kind == READ_MODIFY_WRITE) {
                reads++;
            }
            lengths[i] = length;
            offsets[i] = at;
            at += length;
        }
        MemorySegment h = s.in.segment();
        MemorySegment.copy(batch.kinds(), 0, h, 0, n);
        MemorySegment.copy(batch.keys(), 0, h, s.keysAt, (long) n * keySize);
        MemorySegment.copy(lengths, 0, h, ValueLayout.JAVA_INT_UNALIGNED, s.lengthsAt, n);
        MemorySegment.copy(offsets, 0, h, ValueLayout.JAVA_LONG_UNALIGNED, s.offsetsAt, n);
        if (!inOrder) {
            throw new IllegalStateException("a batch's packed values do not lie in the order of its operations");
        }
        MemorySegment.copy(batchValues, base, h, s.valuesAt, at);
        // The values this batch's gets will read, by the mean so far: registered now, not under the lock.
        long mean = meanReadLength;
        if (mean > 0 && reads > 0) {
            s.read.ensureKeeping(reads * Math.min(valueSize, mean + mean / 2), 0);
        }
        return s;
    }

    /** Which kinds carry a value, by ordinal. */
    private static final boolean[] CARRIES_VALUE = new boolean[OpKind.values().length];
    private static final byte GET = (byte) OpKind.GET.ordinal();
    private static final byte READ_MODIFY_WRITE = (byte) OpKind.READ_MODIFY_WRITE.ordinal();

    static {
        for (OpKind k : OpKind.values()) {
            CARRIES_VALUE[k.ordinal()] = k.hasValue();
        }
    }

    /**
     * Runs {@code batch} (packed, plain kinds only) by {@code path}'s device route, under the engine's
     * lock, from the calling thread's {@link #stage} of it, or laid out now where it was not (a segment
     * of a conditional batch, already under the lock: its results then go into {@code result} at once).
     * A chunk that fails leaves the results of the chunks before it in {@code result}.
     */
    public void run(Batch batch, BatchResult result, BatchPath path) {
        if (spread == null) {
            spread = cuda.function("gphash_packed_spread");
            gather = cuda.function("gphash_packed_gather");
        }
        Staged s = staged.get();
        if (s.batch != batch || s.ran > 0) {
            s = layOut(batch);
        }
        int chunk = chunkOperations(valueSize);
        try {
            for (int first = 0; first < s.n; first += chunk) {
                runChunk(s, path, first, Math.min(chunk, s.n - first));
            }
        } catch (RuntimeException | Error e) {
            moveResults(s, result);
            throw e;
        }
        if (!s.finishLater) {
            moveResults(s, result);
        }
    }

    /** After the lock: moves the results of the batch this thread staged and ran into {@code result}. */
    public void finish(Batch batch, BatchResult result) {
        Staged s = staged.get();
        if (s.batch == batch && s.finishLater) {
            long t0 = System.nanoTime();
            moveResults(s, result);
            times.add(HostStageTimes.Stage.PACKED_FINISH, System.nanoTime() - t0);
        }
    }

    private void runChunk(Staged s, BatchPath path, int first, int m) {
        long t0 = System.nanoTime();
        // The arrays still hold the batch's kinds, lengths and offsets from this chunk on (the chunks
        // before it put their codes and lengths read there). The chunk's values lie together: from its first operation's offset to its last one's end.
        int last = first + m - 1;
        long valuesFrom = s.offsets[first];
        long chunkValues = s.offsets[last] + s.lengths[last] - valuesFrom;
        long keyBytes = (long) m * keySize;
        long columnBytes = (long) m * valueSize;
        kinds.ensure(m);
        keys.ensure(keyBytes);
        lengths.ensure(4L * m);
        offsets.ensure(8L * m);
        codes.ensure(m);
        out.ensure(columnBytes);
        outLengths.ensure(4L * m);
        cuMemcpyHtoD(kinds.pointer(), s.in.at(first), m);
        cuMemcpyHtoD(keys.pointer(), s.in.at(s.keysAt + (long) first * keySize), keyBytes);
        cuMemcpyHtoD(lengths.pointer(), s.in.at(s.lengthsAt + 4L * first), 4L * m);
        boolean carriesValues = false;  // a write of an empty value carries one too: the route gets a column
        for (int j = first; j <= last && !carriesValues; j++) {
            carriesValues = CARRIES_VALUE[s.kinds[j]];
        }
        if (carriesValues) {
            values.ensure(columnBytes);
        }
        if (chunkValues > 0) {
            ensureDoubling(packed, chunkValues);
            cuMemcpyHtoD(offsets.pointer(), s.in.at(s.offsetsAt + 8L * first), 8L * m);
            cuMemcpyHtoD(packed.pointer(), s.in.at(s.valuesAt + valuesFrom), chunkValues);
            // The chunk's offsets count from the batch's first value: the kernel's base is moved back by as much.
            Launcher.launch(spread, (long) m * 32, null, KernelParams.packedColumn(m, packed.address() - valuesFrom,
                    offsets.address(), lengths.address(), values.address(), valueSize));
            cuda.synchronizeContext();  // the device route runs on the engine's stream
        }
        long t1 = System.nanoTime();
        times.add(HostStageTimes.Stage.PACKED_IN, t1 - t0);
        path.executeOnDevice(m, kinds.address(), keys.address(), carriesValues ? values.address() : 0,
                lengths.address(), codes.address(), out.address(), outLengths.address());

        long t2 = System.nanoTime();
        times.add(HostStageTimes.Stage.PACKED_RUN, t2 - t1);
        // Back: codes | lengths read | their offsets among the values read, then the values read, packed on the GPU.
        MemorySegment back = s.back.segment();
        long codesAt = first;
        long readLengthsAt = s.lengthsAt + 4L * first;
        long readOffsetsAt = s.offsetsAt + 8L * first;
        cuMemcpyDtoH(s.back.at(codesAt), codes.pointer(), m);
        cuMemcpyDtoH(s.back.at(readLengthsAt), outLengths.pointer(), 4L * m);
        byte[] codeArray = s.codes;
        int[] lengthArray = s.lengths;
        long[] offsetArray = s.offsets;
        MemorySegment.copy(back, ValueLayout.JAVA_BYTE, codesAt, codeArray, first, m);
        MemorySegment.copy(back, ValueLayout.JAVA_INT_UNALIGNED, readLengthsAt, lengthArray, first, m);
        long chunkRead = 0;
        int valuesRead = 0;
        for (int j = first; j <= last; j++) {
            int length = 0;
            if (returnsValue(codeArray[j])) {
                length = lengthArray[j];
                valuesRead++;
            }
            lengthArray[j] = length;  // 0 where nothing was read
            offsetArray[j] = s.readBytes + chunkRead;
            chunkRead += length;
        }
        MemorySegment.copy(lengthArray, first, back, ValueLayout.JAVA_INT_UNALIGNED, readLengthsAt, m);
        MemorySegment.copy(offsetArray, first, back, ValueLayout.JAVA_LONG_UNALIGNED, readOffsetsAt, m);
        if (chunkRead > 0) {
            s.read.ensureKeeping(s.readBytes + chunkRead, s.readBytes);  // made ready before the lock, as a rule
            ensureDoubling(packed, chunkRead);
            cuMemcpyHtoD(lengths.pointer(), s.back.at(readLengthsAt), 4L * m);
            cuMemcpyHtoD(offsets.pointer(), s.back.at(readOffsetsAt), 8L * m);
            Launcher.launch(gather, (long) m * 32, null, KernelParams.packedColumn(m, packed.address() - s.readBytes,
                    offsets.address(), lengths.address(), out.address(), valueSize));
            cuMemcpyDtoH(s.read.at(s.readBytes), packed.pointer(), chunkRead);
            s.readBytes += chunkRead;
            long mean = meanReadLength;
            long got = chunkRead / valuesRead;
            meanReadLength = mean == 0 ? got : (3 * mean + got) / 4;
        }
        s.ran = first + m;
        times.add(HostStageTimes.Stage.PACKED_BACK, System.nanoTime() - t2);
    }

    /** The outcomes of the operations that ran, and the values they read, into {@code result}. */
    private static void moveResults(Staged s, BatchResult result) {
        int ran = s.ran;
        MemorySegment back = s.back.segment();
        MemorySegment read = s.read.segment();
        byte[] codes = s.codes;
        int[] lengths = s.lengths;
        MemorySegment.copy(back, ValueLayout.JAVA_BYTE, 0, codes, 0, ran);
        MemorySegment.copy(back, ValueLayout.JAVA_INT_UNALIGNED, s.lengthsAt, lengths, 0, ran);  // 0 where nothing was read
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
            MemorySegment.copy(back, ValueLayout.JAVA_LONG_UNALIGNED, s.offsetsAt, offsets, 0, ran);
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

    @Override
    public void close() {
        for (DeviceBuffer b : new DeviceBuffer[] {kinds, keys, lengths, offsets, packed, values, codes, out, outLengths}) {
            b.close();
        }
        for (Staged s; (s = everyStaged.poll()) != null;) {
            s.in.close();
            s.back.close();
            s.read.close();
        }
    }
}
