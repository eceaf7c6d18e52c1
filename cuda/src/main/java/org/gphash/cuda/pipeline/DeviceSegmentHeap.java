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

    private final DeviceBuffer units = new DeviceBuffer();
    private final DeviceBuffer offsets = new DeviceBuffer();
    private final DeviceBuffer classes = new DeviceBuffer();
    private final DeviceBuffer used = new DeviceBuffer();
    private final DeviceBuffer freeStack = new DeviceBuffer();
    private final DeviceBuffer state = new DeviceBuffer();
    private final DeviceBuffer classTable = new DeviceBuffer();
    /** heap_segments.cuh's seg_check counts after a take (0-3) and after a retire (4-7), when batches are logged. */
    private final DeviceBuffer checks = new DeviceBuffer();
    private int segments;
    private int takeClass;
    private int perSegment;
    private long freeBlocks;

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
        if (perSegment == 0) {
            throw new IllegalStateException("values of class " + takeClass + " take runs of segments; the GPU's heap takes blocks inside one");
        }
        long[] bits = h.unitBits();
        int[] cls = new int[segments];
        int[] counts = new int[segments];
        int[] stack = new int[segments];
        long[] st = new long[KernelParams.SEG_STATE_WORDS];
        int top = 0;
        for (int s = segments - 1; s >= 0; s--) {  // the stack's top is the lowest free segment
            int c = h.classes()[s];
            int u = usedIn(bits, s);
            cls[s] = c;
            counts[s] = u;
            if (c < 0) {
                if (u != 0) {
                    throw new IllegalStateException("the free segment at pool offset " + h.offsets()[s] + " has blocks in use");
                }
                stack[top++] = s;
            } else if (table[ValueClasses.COUNT + c] == 0) {
                throw new IllegalStateException("the segment at pool offset " + h.offsets()[s] + " holds class " + c
                        + ", whose blocks take runs of segments; the GPU's heap takes blocks inside one");
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
        copyIn(checks, Pointer.to(new long[8]), 64);
        freeBlocks = freeOfTakeClass(st);
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
            classBytes[s] = (byte) cls[s];
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
        freeBlocks = freeOfTakeClass(readState());
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
                classes.address(), used.address(), freeStack.address(), state.address(), classTable.address(), takeClass);
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
        return (long) segments * perSegment;
    }

    @Override
    public void account(long taken, long freed) {
        freeBlocks += freed - taken;
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
    }
}
