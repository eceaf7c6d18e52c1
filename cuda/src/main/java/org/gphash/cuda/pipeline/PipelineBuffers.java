package org.gphash.cuda.pipeline;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.gphash.Geometry;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;

/**
 * The v2 pipeline's device memory, sized for a capacity class (a power of two of operations): the
 * per-operation arrays, the per-group arrays (indexed by the key table's entries, twice the capacity),
 * the lists stages build, the address bins, the gather buffer and the table of the lines phase M
 * writes (as many entries as the key table); and the PipeParams struct over them
 * (pipeline/pipe_params.cuh). Not thread-safe.
 */
public final class PipelineBuffers implements AutoCloseable {

    /** The smallest capacity class: a batch's buffers are sized for at least this many operations. */
    public static final long MIN_CAPACITY = 1L << 12;

    private final int valueSize;
    final DeviceBuffer descriptor = new DeviceBuffer();
    final DeviceBuffer counters = new DeviceBuffer();
    final DeviceBuffer sortKeys = new DeviceBuffer();
    final DeviceBuffer sortVals = new DeviceBuffer();
    final DeviceBuffer altKeys = new DeviceBuffer();
    final DeviceBuffer altVals = new DeviceBuffer();
    final DeviceBuffer lastSet = new DeviceBuffer();
    final DeviceBuffer lastSrc = new DeviceBuffer();
    private final DeviceBuffer vsrc = new DeviceBuffer();
    final DeviceBuffer owner = new DeviceBuffer();
    final DeviceBuffer gStart = new DeviceBuffer();
    private final DeviceBuffer gEnd = new DeviceBuffer();
    private final DeviceBuffer gMeta = new DeviceBuffer();
    private final DeviceBuffer gSlot = new DeviceBuffer();
    private final DeviceBuffer gBucket = new DeviceBuffer();
    private final DeviceBuffer gFp = new DeviceBuffer();
    private final DeviceBuffer gHash = new DeviceBuffer();
    final DeviceBuffer gAction = new DeviceBuffer();
    private final DeviceBuffer gSrc = new DeviceBuffer();
    private final DeviceBuffer gBlock = new DeviceBuffer();
    private final DeviceBuffer gRead = new DeviceBuffer();
    private final DeviceBuffer gNeed = new DeviceBuffer();
    private final DeviceBuffer gLen = new DeviceBuffer();
    final DeviceBuffer groups = new DeviceBuffer();
    final DeviceBuffer inserts = new DeviceBuffer();
    final DeviceBuffer vwrites = new DeviceBuffer();
    private final DeviceBuffer deletes = new DeviceBuffer();
    private final DeviceBuffer unsortedOff = new DeviceBuffer();
    private final DeviceBuffer unsortedEnt = new DeviceBuffer();
    private final DeviceBuffer reads = new DeviceBuffer();
    private final DeviceBuffer slotWrites = new DeviceBuffer();
    final DeviceBuffer bins = new DeviceBuffer();
    final DeviceBuffer binStart = new DeviceBuffer();
    final DeviceBuffer binFill = new DeviceBuffer();
    private final DeviceBuffer gather = new DeviceBuffer();
    private final DeviceBuffer blocks = new DeviceBuffer();
    private final DeviceBuffer vclass = new DeviceBuffer();
    final DeviceBuffer lines = new DeviceBuffer();
    private final DeviceBuffer lineGroups = new DeviceBuffer();
    private final List<DeviceBuffer> all = List.of(descriptor, counters, sortKeys, sortVals, altKeys, altVals,
            lastSet, lastSrc, vsrc, owner, gStart, gEnd, gMeta, gSlot, gBucket, gFp, gHash, gAction, gSrc, gBlock, gRead,
            gNeed, gLen, groups, inserts, vwrites, deletes, unsortedOff, unsortedEnt, reads, slotWrites, bins, binStart,
            binFill, gather, blocks, vclass, lines, lineGroups);
    private long capacity;

    PipelineBuffers(Geometry geometry) {
        this.valueSize = geometry.valueSize();
    }

    /** The capacity class for n operations: a power of two, at least {@link #MIN_CAPACITY}. */
    public static long capacityFor(long n) {
        long c = MIN_CAPACITY;
        while (c < n) {
            c <<= 1;
        }
        return c;
    }

    /** GPU memory the buffers of a capacity class take (for the mode decision at open). */
    public static long bytesFor(long capacity, int valueSize) {
        long perOp = 4 * 4 + 3 * 4 + 4 * 5 + 12 + 8 + 8 + 4;   // sort, scans, lists, unsorted, blocks, classes
        long perEntry = 2 * (4 * 8 + 8 * 4 + 8 * KernelParams.MAX_HASHES   // group table entries: twice the capacity
                + 8 + 4 * 4);                                                 // and the lines table's
        long gather = Math.min(capacity, MirrorRuns.maxSlice(valueSize)) * (long) valueSize;
        return capacity * (perOp + perEntry) + gather + 3L * KernelParams.ADDRESS_BINS * 4 + (64L << 20);  // + scan/sort scratch
    }

    long capacity() {
        return capacity;
    }

    /** Key table entries: twice the capacity. */
    long tableCapacity() {
        return 2 * capacity;
    }

    /** Bits of a key table entry's number for a launch of capacity {@code launch}: what the sort by entry sorts on. */
    static int tableBits(long launch) {
        return Long.numberOfTrailingZeros(2 * launch);
    }

    /**
     * Sizes the buffers for {@code n} operations; returns true when they moved (so that whatever
     * refers to their addresses, such as captured graphs, is dropped).
     */
    boolean ensure(long n) {
        long c = capacityFor(n);
        if (c <= capacity) {
            return false;
        }
        long t = 2 * c;
        descriptor.ensure(KernelParams.PIPE_BATCH_FIELDS * 8L);
        counters.ensure(KernelParams.PIPE_COUNTERS * 8L);
        for (DeviceBuffer b : new DeviceBuffer[] {sortKeys, sortVals, altKeys, altVals, lastSet, lastSrc, vsrc, groups,
                inserts, vwrites, deletes, unsortedEnt, reads, slotWrites, vclass}) {
            b.ensure(c * 4);
        }
        unsortedOff.ensure(c * 8);
        blocks.ensure(c * 8);
        gather.ensure(Math.min(c, MirrorRuns.maxSlice(valueSize)) * valueSize);  // a run is a slice at most
        for (DeviceBuffer b : new DeviceBuffer[] {owner, gStart, gEnd, gFp, gAction, gSrc, gRead, gNeed, gLen}) {
            b.ensure(t * 4);
        }
        for (DeviceBuffer b : new DeviceBuffer[] {gMeta, gSlot, gBucket, gBlock}) {
            b.ensure(t * 8);
        }
        gHash.ensure(t * 8 * KernelParams.MAX_HASHES);
        lines.ensure(t * 8);
        lineGroups.ensure(t * 4 * 4);
        for (DeviceBuffer b : new DeviceBuffer[] {bins, binStart, binFill}) {
            b.ensure(KernelParams.ADDRESS_BINS * 4L);
        }
        capacity = c;
        return true;
    }

    /**
     * PipeParams over these buffers, used as if they had capacity {@code launch} (a capacity class
     * of at most {@link #capacity()}: a prefix of every array, and a key table of {@code 2 * launch}
     * entries), so that a batch's launches, scans, sort passes and memsets follow its own size and not
     * the largest batch these buffers were grown for. The sort's output is in the alternate buffers
     * when it takes an odd number of passes. {@code addressShift}: a pool offset's address bin is
     * offset >> shift.
     */
    byte[] params(int addressShift, long launch) {
        return params(addressShift, launch, descriptor.address(), counters.address());
    }

    /**
     * As {@link #params(int, long)}, with the batch's descriptor and counters elsewhere in device
     * memory (the one-copy small writes, {@link SmallWrites}, bring them in and out with the columns).
     */
    byte[] params(int addressShift, long launch, long descriptorAt, long countersAt) {
        if (launch > capacity || Long.bitCount(launch) != 1) {
            throw new IllegalArgumentException("launch capacity " + launch + " is not a capacity class within " + capacity);
        }
        boolean inAlt = (RadixSort.passes(tableBits(launch)) & 1) == 1;
        return KernelParams.PIPE.writer().put("batch", descriptorAt).put("capacity", launch)
                .put("table_capacity", 2 * launch).put("sort_keys", sortKeys.address()).put("sort_vals", sortVals.address())
                .put("sorted_entry", inAlt ? altKeys.address() : sortKeys.address())
                .put("sorted_op", inAlt ? altVals.address() : sortVals.address())
                .put("last_set", lastSet.address()).put("last_src", lastSrc.address()).put("vsrc", vsrc.address())
                .put("owner", owner.address()).put("g_start", gStart.address()).put("g_end", gEnd.address())
                .put("g_meta", gMeta.address()).put("g_slot", gSlot.address()).put("g_bucket", gBucket.address())
                .put("g_fp", gFp.address()).put("g_hash", gHash.address()).put("g_action", gAction.address())
                .put("g_src", gSrc.address()).put("g_block", gBlock.address()).put("g_read", gRead.address())
                .put("g_need", gNeed.address()).put("g_len", gLen.address()).put("groups", groups.address())
                .put("inserts", inserts.address())
                .put("vwrites", vwrites.address()).put("deletes", deletes.address())
                .put("unsorted_off", unsortedOff.address()).put("unsorted_ent", unsortedEnt.address())
                .put("reads", reads.address()).put("slot_writes", slotWrites.address()).put("bins", bins.address())
                .put("bin_start", binStart.address()).put("bin_fill", binFill.address()).put("gather", gather.address())
                .put("blocks", blocks.address()).put("vclass", vclass.address()).put("counters", countersAt)
                .put("address_shift", addressShift)
                .put("lines", lines.address()).put("line_groups", lineGroups.address()).bytes();
    }

    /** The address bin shift for a pool of {@code poolLength} bytes: at most {@code bins} (a power of two) bins. */
    static int addressShift(long poolLength, int bins) {
        if (Integer.bitCount(bins) != 1 || bins > KernelParams.ADDRESS_BINS) {
            throw new IllegalArgumentException("address bins must be a power of two up to " + KernelParams.ADDRESS_BINS
                    + ", got " + bins);
        }
        int bits = Integer.numberOfTrailingZeros(bins);
        return Math.max(0, 64 - Long.numberOfLeadingZeros(Math.max(1, poolLength - 1)) - bits);
    }

    /**
     * A diagnostic (gphash.pipeline.debug, synchronous runs only): the lists the last batch built,
     * checked against each other; prints what disagrees.
     */
    void checkLists(long[] c) {
        int[] groupList = ints(groups, (int) c[KernelParams.PIPE_GROUPS]);
        int[] insertList = ints(inserts, (int) c[KernelParams.PIPE_INSERTS]);
        int[] writeList = ints(vwrites, (int) c[KernelParams.PIPE_VALUE_WRITES]);
        int[] action = ints(gAction, (int) tableCapacity());
        Set<Integer> g = distinct(groupList, "group");
        Set<Integer> ins = distinct(insertList, "insert group");
        Set<Integer> w = distinct(writeList, "value-write group");
        long lost = ins.stream().filter(e -> !w.contains(e) && action[e] != 4).count();
        System.err.printf("  lists: %d groups (%d distinct), %d inserts (%d distinct), %d value writes (%d distinct), %d "
                + "inserts neither placed nor failed%n", groupList.length, g.size(), insertList.length, ins.size(),
                writeList.length, w.size(), lost);
    }

    private static Set<Integer> distinct(int[] list, String what) {
        Set<Integer> seen = new HashSet<>();
        for (int e : list) {
            if (!seen.add(e)) {
                System.err.println("  duplicate " + what + " " + e);
            }
        }
        return seen;
    }

    private static int[] ints(DeviceBuffer b, int n) {
        int[] out = new int[n];
        if (n > 0) {
            jcuda.driver.JCudaDriver.cuMemcpyDtoH(jcuda.Pointer.to(out), b.pointer(), n * 4L);
        }
        return out;
    }

    @Override
    public void close() {
        for (DeviceBuffer b : all) {
            b.close();
        }
    }
}
