package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuCtxGetStreamPriorityRange;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD32Async;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;
import static jcuda.driver.JCudaDriver.cuStreamCreateWithPriority;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.lang.foreign.ValueLayout;

import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.runtime.PinnedBuffer;

/**
 * A device-resident batch split by shard on the GPU that holds it, and its outcomes merged back
 * there (pipeline/shard_split.cuh): every operation's shard and position, one stable radix pass that
 * lists each shard's positions together in batch order, and the parts' columns gathered in that
 * order ({@link #columns}), one part after another. After the shards ran their parts,
 * {@link #merge} scatters the parts' outcomes and values read to the caller's positions. Only the
 * totals cross to the host (each part's length, and what the batch reads and writes): nothing of the
 * batch itself.
 *
 * <p>Not thread-safe: a caller holds one for a batch (org.gphash.cuda.shard.DeviceBatchesAcrossShards
 * keeps them in a pool per GPU).
 */
public final class DeviceShardSplit implements AutoCloseable {

    private final CudaRuntime cuda;
    private final PipelineKernels kernels;
    private final CUfunction split;
    private final DeviceScan scan;
    private final RadixSort sort;
    private final CUstream stream = new CUstream();
    private final int keySize;
    private final int valueSize;
    private final DeviceBuffer shardOf = new DeviceBuffer();
    private final DeviceBuffer positions = new DeviceBuffer();
    private final DeviceBuffer sortedShardOf = new DeviceBuffer();
    private final DeviceBuffer sortedPositions = new DeviceBuffer();
    private final DeviceBuffer totals = new DeviceBuffer();
    private final PinnedBuffer totalsHost = new PinnedBuffer();
    private final PartColumns columns;
    /** Where the last split's positions, in shard order, lie. */
    private long listed;
    private long n;

    /**
     * A split on {@code cuda}'s GPU for batches of a geometry's keys and values.
     *
     * @param cuda      the GPU whose memory holds the batches
     * @param keySize   bytes a key
     * @param valueSize bytes a value
     */
    public DeviceShardSplit(CudaRuntime cuda, int keySize, int valueSize) {
        this.cuda = cuda;
        this.keySize = keySize;
        this.valueSize = valueSize;
        cuda.bind();
        this.kernels = new PipelineKernels(cuda);
        this.split = cuda.function("gphash_shard_split");
        this.scan = new DeviceScan(kernels);
        this.sort = new RadixSort(kernels, scan);
        this.columns = new PartColumns(keySize, valueSize);
        // The split's and merge's kernels are small and every part of the batch waits for them, while
        // the shard on this GPU runs other batches' parts, whose blocks would fill the GPU ahead of
        // them: the highest priority lets them in between.
        int[] least = new int[1];
        int[] greatest = new int[1];
        cuCtxGetStreamPriorityRange(least, greatest);
        cuStreamCreateWithPriority(stream, CUstream_flags.CU_STREAM_NON_BLOCKING, greatest[0]);
    }

    /** {@return the GPU this split runs on} */
    public CudaRuntime cuda() {
        return cuda;
    }

    /**
     * Splits the first {@code count} operations of a batch in this GPU's memory by shard and gathers
     * the parts' columns, then waits for it and returns the totals: {@code totals[s]} operations of
     * shard s (its part starts where the parts before it end), then from {@code totals[shards]} on
     * the counts at {@link KernelParams#SPLIT_WRITES}, {@link KernelParams#SPLIT_READS} and
     * {@link KernelParams#SPLIT_REFUSED}.
     *
     * @param count  operations, at most 2^31 - 1
     * @param kinds  device address of the caller's kinds
     * @param keys   device address of its keys
     * @param values device address of its values, or 0
     * @param seed   the shard function's seed
     * @param shards the shard count
     * @return the totals, {@code shards + KernelParams.SPLIT_TOTALS} of them
     */
    public int[] split(long count, long kinds, long keys, long values, long seed, int shards) {
        if (count <= 0 || count > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a split takes 1 to " + Integer.MAX_VALUE + " operations, not " + count);
        }
        cuda.bind();
        int t = shards + KernelParams.SPLIT_TOTALS;
        shardOf.ensure(count * 4);
        positions.ensure(count * 4);
        sortedShardOf.ensure(count * 4);
        sortedPositions.ensure(count * 4);
        totals.ensure(t * 4L);
        totalsHost.ensure(t * 4L);
        sort.reserve(count);
        columns.ensure(count);
        cuMemsetD32Async(totals.pointer(), 0, t, stream);
        cuMemsetD8Async(columns.codes.pointer(), (byte) 0, count, stream);  // RETRY for a part that never ran
        Launcher.launch(split, count, stream, KernelParams.shardSplit(count, kinds, keys, keySize, seed, shards,
                shardOf.address(), positions.address(), totals.address()));
        int bits = Math.max(1, 32 - Integer.numberOfLeadingZeros(shards - 1));
        boolean inAlt = sort.sort(stream, shardOf.address(), positions.address(), sortedShardOf.address(),
                sortedPositions.address(), count, 0, bits);
        listed = inAlt ? sortedPositions.address() : positions.address();
        n = count;
        Launcher.launch(kernels.partGather, count, stream, KernelParams.partGather(count, listed, 0, kinds, keys, values,
                columns.kinds.address(), columns.keys.address(), columns.values.address(), keySize, valueSize));
        cuMemcpyDtoHAsync(totalsHost.pointer(), totals.pointer(), t * 4L, stream);
        cuStreamSynchronize(stream);
        int[] out = new int[t];
        for (int i = 0; i < t; i++) {
            out[i] = totalsHost.segment().getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i);
        }
        return out;
    }

    /** {@return the parts' columns of the last split, in shard order (on this GPU)} */
    public PartColumns columns() {
        return columns;
    }

    /**
     * Scatters the last split's outcomes (and values read, when {@code out} is not 0) from the parts'
     * columns to their positions in the caller's columns, and waits for it.
     *
     * @param codes device address of the caller's codes column
     * @param out   device address of its out column, or 0
     */
    public void merge(long codes, long out) {
        cuda.bind();
        Launcher.launch(kernels.partScatter, n, stream, KernelParams.partScatter(n, listed, columns.codes.address(),
                out == 0 ? 0 : columns.out.address(), codes, out, valueSize));
        cuStreamSynchronize(stream);
    }

    @Override
    public void close() {
        cuda.bind();
        cuStreamDestroy(stream);
        sort.close();
        scan.close();
        shardOf.close();
        positions.close();
        sortedShardOf.close();
        sortedPositions.close();
        totals.close();
        totalsHost.close();
        columns.close();
    }

    /**
     * The five columns of a batch's parts, one part after another, in the memory of one GPU: the
     * split's, or a shard's on another GPU that its part is copied to. Not thread-safe.
     */
    public static final class PartColumns implements AutoCloseable {
        private final int keySize;
        private final int valueSize;
        public final DeviceBuffer kinds = new DeviceBuffer();
        public final DeviceBuffer keys = new DeviceBuffer();
        public final DeviceBuffer values = new DeviceBuffer();
        public final DeviceBuffer codes = new DeviceBuffer();
        public final DeviceBuffer out = new DeviceBuffer();

        /**
         * Columns for batches of a geometry; call {@link #ensure} with the GPU's context bound.
         *
         * @param keySize   bytes a key
         * @param valueSize bytes a value
         */
        public PartColumns(int keySize, int valueSize) {
            this.keySize = keySize;
            this.valueSize = valueSize;
        }

        /** Room for {@code count} operations (the GPU's context bound). */
        public void ensure(long count) {
            kinds.ensure(count);
            keys.ensure(count * keySize);
            values.ensure(count * valueSize);
            codes.ensure(count);
            out.ensure(count * valueSize);
        }

        /** {@return the address of operation {@code i}'s kind} */
        public long kindAt(long i) {
            return kinds.address() + i;
        }

        /** {@return the address of operation {@code i}'s key} */
        public long keyAt(long i) {
            return keys.address() + i * keySize;
        }

        /** {@return the address of operation {@code i}'s value} */
        public long valueAt(long i) {
            return values.address() + i * valueSize;
        }

        /** {@return the address of operation {@code i}'s outcome code} */
        public long codeAt(long i) {
            return codes.address() + i;
        }

        /** {@return the address of operation {@code i}'s value read} */
        public long outAt(long i) {
            return out.address() + i * valueSize;
        }

        @Override
        public void close() {
            kinds.close();
            keys.close();
            values.close();
            codes.close();
            out.close();
        }
    }
}
