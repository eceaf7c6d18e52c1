package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import jcuda.Pointer;
import org.gphash.cuda.runtime.DeviceBuffer;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.format.ValueClasses;
import org.gphash.table.PoolTable;
import org.gphash.table.SizeClassHeap;
import org.gphash.table.TableKernels;

/**
 * Format 3's value heap in GPU memory ({@link DeviceHeap}, pipeline/heap_segments.cuh): every segment's
 * class and blocks in use, the bitmap of 16-byte units the close record keeps, and a stack of the free
 * segments, so that any class takes a segment another emptied. It moves as the pool's
 * {@link TableKernels.HeapSegments} and comes back through the same restore a clean open makes, which
 * checks every mark against its segment's class. The counts the host sizes growths by are of the
 * pool's class (its values' blocks): the room in the segments it holds and every free segment's
 * blocks of it, kept by each batch's taken and freed counters (a block freed is room of the class,
 * and stays so when its segment empties and goes back to the free ones). Not thread-safe.
 */
final class DeviceSegmentHeap implements DeviceHeap {

    private static final int SEGMENT_WORDS = KernelParams.SEGMENT_WORDS;
    /** heap_segments.cuh's kSegFree and kSegRunTail. */
    private static final int FREE = -1;
    private static final int RUN_TAIL = -2;

    private final DeviceBuffer units = new DeviceBuffer();
    private final DeviceBuffer offsets = new DeviceBuffer();
    private final DeviceBuffer classes = new DeviceBuffer();
    private final DeviceBuffer used = new DeviceBuffer();
    private final DeviceBuffer freeStack = new DeviceBuffer();
    private final DeviceBuffer state = new DeviceBuffer();
    private final DeviceBuffer classTable = new DeviceBuffer();
    /** heap_segments.cuh's seg_check counts after a take (0-3) and after a retire (4-7), when batches are logged. */
    private final DeviceBuffer checks = new DeviceBuffer();
    /** Each segment's room to its region's end (HeapParams.seg_room). */
    private final DeviceBuffer room = new DeviceBuffer();
    private int segments;
    private int takeClass;
    private int perSegment;
    /** Segments a block of the pool's class takes: 1 where blocks share segments, else its run's length. */
    private int runLength;
    /** The host's copy of each segment's room to its region's end, for {@link #freeRuns}. */
    private int[] regionRoom = new int[0];
    /**
     * Blocks of the pool's class a batch can take without a growth; where that class takes runs of
     * segments, a lower bound on the free runs of its length (every block taken counts against it, a
     * block freed not: {@link #account}), counted again from the GPU's segments when it falls short.
     */
    private long freeBlocks;
    /** The GPU's count of runs of the pool's class freed (KernelParams.SEG_RUNS_FREED) when last read. */
    private long runsFreedSeen;

    @Override
    public void push(PoolTable pool) {
        TableKernels.HeapSegments h = pool.heapSegments();
        if (h == null) {
            throw new IllegalStateException("a format " + pool.formatVersion() + " pool has no segments");
        }
        int[] table = classTable();
        segments = h.offsets().length;
        takeClass = h.fullClass();
        perSegment = table[ValueClasses.COUNT + takeClass];
        runLength = runLength(takeClass);
        regionRoom = h.regionRoom().clone();
        long[] bits = h.unitBits();
        int[] cls = new int[segments];
        int[] counts = new int[segments];
        int[] stack = new int[segments];
        long[] st = new long[KernelParams.SEG_STATE_WORDS];
        for (int s = 0; s < segments; s++) {
            cls[s] = h.classes()[s];
        }
        for (int s = 0; s < segments; s++) {
            int c = cls[s];
            if (c >= 0 && table[ValueClasses.COUNT + c] == 0) {
                // A run's first segment names its class; the host's record gives the rest as free.
                int k = runLength(c);
                if (k > regionRoom[s]) {
                    throw new IllegalStateException("the run of class " + c + " at pool offset " + h.offsets()[s]
                            + " passes its region's end");
                }
                for (int t = s + 1; t < s + k; t++) {
                    if (cls[t] != FREE || usedIn(bits, t) != 0) {
                        throw new IllegalStateException("the run of class " + c + " at pool offset " + h.offsets()[s]
                                + " overlaps the segment at " + h.offsets()[t]);
                    }
                    cls[t] = RUN_TAIL;
                }
            }
        }
        int top = 0;
        for (int s = segments - 1; s >= 0; s--) {  // the stack's top is the lowest free segment
            int c = cls[s];
            int u = usedIn(bits, s);
            counts[s] = u;
            if (c == RUN_TAIL) {
                continue;
            }
            if (c < 0) {
                if (u != 0) {
                    throw new IllegalStateException("the free segment at pool offset " + h.offsets()[s] + " has blocks in use");
                }
                stack[top++] = s;
            } else if (table[ValueClasses.COUNT + c] == 0) {
                if (u != 1 || (bits[s * SEGMENT_WORDS] & 1L) == 0) {
                    throw new IllegalStateException("the run of class " + c + " at pool offset " + h.offsets()[s]
                            + " has " + u + " blocks in use, not its one at its first unit");
                }
            } else {
                st[KernelParams.SEG_HELD_FREE + c] += table[ValueClasses.COUNT + c] - u;
            }
        }
        st[KernelParams.SEG_TOP] = top;
        copyIn(units, Pointer.to(bits), bits.length * 8L);
        copyIn(offsets, Pointer.to(h.offsets()), segments * 8L);
        copyIn(classes, Pointer.to(cls), segments * 4L);
        copyIn(used, Pointer.to(counts), segments * 4L);
        copyIn(freeStack, Pointer.to(stack), segments * 4L);
        copyIn(state, Pointer.to(st), st.length * 8L);
        copyIn(classTable, Pointer.to(table), table.length * 4L);
        copyIn(room, Pointer.to(regionRoom), segments * 4L);
        copyIn(checks, Pointer.to(new long[8]), 64);
        freeBlocks = perSegment > 0 ? freeOfTakeClass(st) : freeRuns(cls, runLength);
        runsFreedSeen = 0;  // st's word too
    }

    @Override
    public void pull(PoolTable pool) {
        long[] bits = new long[segments * SEGMENT_WORDS];
        int[] cls = new int[segments];
        if (segments > 0) {
            cuMemcpyDtoH(Pointer.to(bits), units.pointer(), bits.length * 8L);
            cuMemcpyDtoH(Pointer.to(cls), classes.pointer(), segments * 4L);
        }
        byte[] classBytes = new byte[segments];
        long inUse = 0;
        for (int s = 0; s < segments; s++) {
            classBytes[s] = (byte) Math.max(FREE, cls[s]);  // a run's tail is free in the host's record
            inUse += usedIn(bits, s);
        }
        pool.replaceHeapSegments(bits, inUse, classBytes);
        recount();
    }

    /** {@return the free segments now (read from the GPU; nothing may be in flight)} */
    long freeSegments() {
        long[] top = new long[1];
        cuMemcpyDtoH(Pointer.to(top), state.pointer(), 8);
        return top[0];
    }

    /**
     * Counts the free blocks of the pool's class again from the GPU's state, after a batch of values of
     * many lengths, whose counters count blocks of every class (nothing in flight).
     */
    void recount() {
        if (perSegment > 0) {
            freeBlocks = freeOfTakeClass(readState());
        } else {
            recount(readClasses());
        }
    }

    /** Counts the free runs of the pool's class on the GPU's segments as {@code cls} has them (runs pools). */
    private void recount(int[] cls) {
        runsFreedSeen = readState()[KernelParams.SEG_RUNS_FREED];  // frees before the classes were read
        freeBlocks = freeRuns(cls, runLength);
    }

    /** {@return whether a block of the pool's class takes a run of whole segments (values over 8 KiB)} */
    boolean takesRuns() {
        return perSegment == 0;
    }

    /** {@return segments a block of the pool's class takes} */
    int runLength() {
        return runLength;
    }

    /**
     * Places a batch's writes of blocks over 8 KiB ({@code runsByClass}: how many of each class; null for
     * none) on the GPU's segments as they are now, as heap_segments.cuh's runs step will place them: one
     * pass from the heap's start, each stretch of free segments inside one region, when it closes,
     * taking the blocks of the classes still wanted that fit in what is left of it, largest class first.
     * Nothing in flight.
     *
     * @return the segments of the writes that found no room, and the free segments left
     */
    long[] placeRuns(long[] runsByClass) {
        int[] cls = readClasses();
        recount(cls);
        long[] pending = runsByClass == null ? new long[ValueClasses.COUNT] : runsByClass.clone();
        long free = 0;
        long claimed = 0;
        int start = 0;
        int run = 0;
        for (int s = 0; s < segments; s++) {
            if (cls[s] == FREE) {
                free++;
                if (run == 0) {
                    start = s;
                }
                run++;
            } else if (run != 0) {
                claimed += place(pending, start, run);
                run = 0;
            }
            if (regionRoom[s] <= 1 && run != 0) {
                claimed += place(pending, start, run);
                run = 0;
            }
        }
        if (run != 0) {
            claimed += place(pending, start, run);
        }
        long unplaced = 0;
        for (int c = 0; c < pending.length; c++) {
            unplaced += pending[c] * runLength(c);
        }
        return new long[] {unplaced, free - claimed};
    }

    /**
     * {@return whether a batch's writes of blocks over 8 KiB ({@code runsByClass}, null for none) and
     * {@code segments} free segments besides surely fit, by the lower bound of free runs of the pool's
     * class}: each stretch of free segments places at least as many blocks of at most that run's
     * length as it holds runs of it apart, first fit stopping only when what is left is shorter than a
     * block still wanted. One word read (the stack's top); nothing in flight.
     */
    boolean holdsRuns(long[] runsByClass, long segments) {
        long writes = 0;
        long runSegments = 0;
        for (int c = 0; runsByClass != null && c < runsByClass.length; c++) {
            if (runsByClass[c] != 0 && runLength(c) > runLength) {
                return false;  // a block longer than the pool's class's (a framed value's may be): the bound says nothing
            }
            writes += runsByClass[c];
            runSegments += runsByClass[c] * runLength(c);
        }
        return writes <= freeBlocks && freeSegments() - runSegments >= segments;
    }

    /** {@link #placeRuns}'s placing in one stretch; {@return the segments it took} */
    private static long place(long[] pending, int start, int run) {
        long took = 0;
        for (int c = pending.length - 1; c >= 0; c--) {
            int k = runLength(c);
            while (pending[c] > 0 && run >= k) {
                pending[c]--;
                run -= k;
                took += k;
            }
        }
        return took;
    }


    /**
     * Runs of {@code k} free segments that the free segments hold apart, each inside one region, as
     * SizeClassHeap.freeRuns counts them: the blocks of the pool's class a batch of values of the value
     * size may take (heap_segments.cuh's runs step packs each stretch with as many as fit).
     */
    private long freeRuns(int[] cls, int k) {
        long runs = 0;
        int length = 0;
        for (int s = 0; s < segments; s++) {
            if (cls[s] == FREE) {
                length++;
            } else {
                runs += length / k;
                length = 0;
            }
            if (regionRoom[s] <= 1) {  // its region ends here
                runs += length / k;
                length = 0;
            }
        }
        return runs + length / k;
    }

    private int[] readClasses() {
        int[] cls = new int[segments];
        if (segments > 0) {
            cuMemcpyDtoH(Pointer.to(cls), classes.pointer(), segments * 4L);
        }
        return cls;
    }

    private static int runLength(int valueClass) {
        return (ValueClasses.blockBytes(valueClass) + SizeClassHeap.SEGMENT_BYTES - 1) / SizeClassHeap.SEGMENT_BYTES;
    }

    /** The state words as the GPU has them (nothing in flight). */
    private long[] readState() {
        long[] st = new long[KernelParams.SEG_STATE_WORDS];
        cuMemcpyDtoH(Pointer.to(st), state.pointer(), st.length * 8L);
        return st;
    }

    /** {@return blocks of the pool's class a segment holds} */
    long blocksPerSegment() {
        return perSegment;
    }

    /**
     * {@return free segments enough for value writes whose blocks take {@code blockBytes} bytes in all}:
     * a segment holds at least 56 KiB of any class's blocks (its blocks at most 8 KiB), and each class's
     * last segment may be partly filled.
     */
    static long segmentsFor(long blockBytes) {
        long least = SizeClassHeap.SEGMENT_BYTES - SizeClassHeap.SMALL_BLOCK_MAX;
        return (blockBytes + least - 1) / least + ValueClasses.COUNT;
    }

    /** Blocks of the take's class in the segments it holds and in every free segment. */
    private long freeOfTakeClass(long[] st) {
        return st[KernelParams.SEG_HELD_FREE + takeClass] + st[KernelParams.SEG_TOP] * perSegment;
    }

    private static int usedIn(long[] bits, int segment) {
        int u = 0;
        for (int w = segment * SEGMENT_WORDS, end = w + SEGMENT_WORDS; w < end; w++) {
            u += Long.bitCount(bits[w]);
        }
        return u;
    }

    /** Each class's block bytes, then the blocks a segment holds (0: its blocks take runs of segments). */
    private static int[] classTable() {
        int[] t = new int[2 * ValueClasses.COUNT];
        for (int c = 0; c < ValueClasses.COUNT; c++) {
            int bytes = ValueClasses.blockBytes(c);
            t[c] = bytes;
            t[ValueClasses.COUNT + c] = bytes > SizeClassHeap.SMALL_BLOCK_MAX ? 0 : SizeClassHeap.SEGMENT_BYTES / bytes;
        }
        return t;
    }

    private static void copyIn(DeviceBuffer to, Pointer from, long bytes) {
        to.ensure(Math.max(8, bytes));
        if (bytes > 0) {
            cuMemcpyHtoD(to.pointer(), from, bytes);
        }
    }

    @Override
    public byte[] params() {
        return KernelParams.segmentHeap(units.address(), (long) segments * SEGMENT_WORDS, segments, offsets.address(),
                classes.address(), used.address(), freeStack.address(), state.address(), classTable.address(), takeClass,
                room.address());
    }

    /** {@return the device address of the check's counts at {@code at} (zeroed by each push)} */
    long checkCounts(int at) {
        return checks.address() + at * 8L;
    }

    /** The checks' counts since the last call (zeroed); nothing in flight. Only where batches are logged (they run). */
    long[] takeCheckCounts() {
        long[] c = new long[8];
        cuMemcpyDtoH(Pointer.to(c), checks.pointer(), 64);
        cuMemcpyHtoD(checks.pointer(), Pointer.to(new long[8]), 64);
        return c;
    }

    @Override
    public String describe() {
        long[] st = readState();
        StringBuilder b = new StringBuilder("segments ").append(segments).append(", free ").append(st[KernelParams.SEG_TOP])
                .append(" (before the last take's plan ").append(st[KernelParams.SEG_TOP_BEFORE]).append(", popped ")
                .append(st[KernelParams.SEG_POPPED]).append(" for ").append(st[KernelParams.SEG_FRESH])
                .append(" blocks); held free by class:");
        for (int c = 0; c < ValueClasses.COUNT; c++) {
            long held = st[KernelParams.SEG_HELD_FREE + c];
            long taken = st[KernelParams.SEG_HELD_TAKEN + c];
            if (held != 0 || taken != 0) {
                b.append(' ').append(c).append('=').append(held).append(" (took ").append(taken).append(')');
            }
        }
        return b.toString();
    }

    @Override
    public boolean segmented() {
        return true;
    }

    @Override
    public long words() {
        return 0;
    }

    @Override
    public long freePrefixAddress() {
        return 0;
    }

    @Override
    public long segments() {
        return segments;
    }

    @Override
    public long freeBlocks() {
        return freeBlocks;
    }

    @Override
    public long totalBlocks() {
        return perSegment > 0 ? (long) segments * perSegment : segments / Math.max(1, runLength);
    }

    @Override
    public void account(long taken, long freed) {
        if (perSegment > 0) {
            freeBlocks += freed - taken;
            return;
        }
        // A block taken ends at most one run of the pool's class (first fit cuts one run's room by at most
        // its own length, a segment popped for smaller blocks one run). A run of the pool's class freed
        // is one again (it lies in one region, and joining its free neighbours loses none of theirs); a
        // smaller block freed may make none. The GPU counts the former (kSegRunsFreed): one word read,
        // which may already hold frees of a batch still in flight: those segments are free by then.
        long[] word = new long[1];
        cuMemcpyDtoH(Pointer.to(word), state.pointer().withByteOffset(KernelParams.SEG_RUNS_FREED * 8L), 8);
        freeBlocks = Math.max(0, freeBlocks - taken) + (word[0] - runsFreedSeen);
        runsFreedSeen = word[0];
    }

    @Override
    public void close() {
        units.close();
        offsets.close();
        classes.close();
        used.close();
        freeStack.close();
        state.close();
        classTable.close();
        checks.close();
        room.close();
    }
}
