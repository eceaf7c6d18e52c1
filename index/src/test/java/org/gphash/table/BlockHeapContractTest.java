package org.gphash.table;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.gphash.format.HeapChunk;
import org.gphash.format.ValueClasses;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The calls operations make on a value heap ({@link BlockHeap}), held to one plain model of the blocks
 * in use on both heaps behind it: format 2's {@link ValueHeap} and format 3's heap of every size
 * class ({@link SegmentHeap}, issue 53), here with values of one class as a fixed-size pool has them.
 * No block is handed out twice, every block handed out is a block inside the heap's extent, the
 * blocks in use are counted exactly, a take is refused only where the heap says it has no room
 * ({@link BlockHeap#canTake}) and, without a reserve, only when every block is in use; format 2's free
 * count is the total less the blocks in use after every call and a take that would dip into the kept
 * blocks is refused; a block given back twice throws (the ones before it free), and the heap grows by
 * whole regions; and what the pool does with a heap beyond that ({@link PoolHeap}): recovery's rebuild
 * from the blocks in use, regions of any size, the close record's copy. Values of many classes in one
 * format 3 heap: {@link #formatThreesHeapHoldsBlocksOfEveryClassApart}.
 */
class BlockHeapContractTest {

    /** Regions (format 3) and chunks (format 2) start here and follow each other. */
    private static final long FIRST = 1 << 16;

    /** A heap of one side, and how to grow it by a number of segments' worth of blocks. */
    private record Side(BlockHeap heap, IntConsumer grow) {
    }

    /** Format 3's heap whose values of the value size take blocks of class {@code c}, framed or bare. */
    private static SegmentHeap heapOfClass(int c) {
        boolean bare = ValueClasses.isBare(c);
        SegmentHeap heap = new SegmentHeap(ValueClasses.blockBytes(c) - ValueClasses.headerBytes(c), bare);
        assertEquals(c, heap.fullClass());
        return heap;
    }

    /**
     * A heap of class {@code c} with {@code segments} segments' worth of blocks: format 3's, or format
     * 2's with as many blocks as format 3's regions hold (chunks of that many blocks).
     */
    private static Side side(boolean format3, int c, int segments) {
        int block = ValueClasses.blockBytes(c);
        SegmentHeap regions = heapOfClass(c);
        ValueHeap chunks = format3 ? null : new ValueHeap(block, List.of());
        if (chunks != null) {
            chunks.startRebuild();
            chunks.finishRebuild();
        }
        long[] end = {FIRST};
        IntConsumer grow = n -> {
            long before = regions.totalBlocks();
            regions.addRegion(end[0], (long) n * SizeClassHeap.SEGMENT_BYTES);
            if (chunks != null) {
                chunks.addChunk(new HeapChunk(end[0], (regions.totalBlocks() - before) * block));
            }
            end[0] += (long) n * SizeClassHeap.SEGMENT_BYTES;
        };
        grow.accept(segments);
        return new Side(format3 ? regions : chunks, grow);
    }

    @Property(tries = 200)
    void bothHeapsKeepTheContractAgainstAModel(@ForAll boolean format3,
                                               @ForAll @IntRange(min = 0, max = 40) int valueClass,
                                               @ForAll @IntRange(min = 1, max = 3) int segments,
                                               @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seed) {
        Side side = side(format3, valueClass, segments);
        BlockHeap heap = side.heap();
        int c = format3 ? valueClass : -1;
        int valueBytes = ValueClasses.blockBytes(valueClass) - ValueClasses.HEADER_BYTES;
        Random r = new Random(seed);
        List<Long> live = new ArrayList<>();
        Set<Long> inUse = new HashSet<>();
        long total = heap.totalBlocks();
        assertTrue(total > 0, "blocks in " + segments + " segments of class " + valueClass);
        assertEquals(total, heap.freeBlocks());
        long[] out = new long[256];
        for (int step = 0; step < 400; step++) {
            long freeBefore = heap.freeBlocks();
            switch (r.nextInt(7)) {
                case 0, 1 -> {
                    long keep = r.nextBoolean() ? 0 : BlockHeap.UPDATE_RESERVE;
                    boolean room = heap.canTake(c, keep);
                    long b = heap.allocate(c, keep);
                    assertEquals(room, b >= 0, "a take where the heap said it had room: " + room);
                    if (!format3 && freeBefore <= keep) {
                        assertEquals(-1, b, "a take into the kept blocks");
                    }
                    if (b >= 0) {
                        taken(heap, b, c, valueBytes, inUse, live);
                    } else if (keep == 0) {
                        assertEquals(total, inUse.size(), "a take refused with a block free");
                    }
                }
                case 2 -> {
                    int n = 1 + r.nextInt(out.length);
                    long keep = r.nextBoolean() ? 0 : BlockHeap.UPDATE_RESERVE;
                    int got = heap.allocateNear(out, n, c, keep);
                    if (!format3) {
                        assertEquals(Math.max(0, Math.min(n, freeBefore - keep)), got, "blocks of a grant");
                    } else if (keep == 0) {
                        assertEquals(Math.min(n, total - inUse.size()), got, "blocks of a grant");
                    }
                    for (int i = 0; i < got; i++) {
                        taken(heap, out[i], c, valueBytes, inUse, live);
                    }
                }
                case 3, 4 -> {
                    if (!live.isEmpty()) {
                        long b = live.remove(r.nextInt(live.size()));
                        inUse.remove(b);
                        heap.free(b);
                    }
                }
                case 5 -> {
                    int n = Math.min(live.size(), r.nextInt(out.length));
                    for (int i = 0; i < n; i++) {
                        out[i] = live.remove(live.size() - 1);
                        inUse.remove(out[i]);
                    }
                    if (n > 1 && r.nextInt(4) == 0) {
                        // One of them given back first: the batch's free throws there, those before it counted free.
                        int twice = 1 + r.nextInt(n - 1);
                        heap.free(out[twice]);
                        assertThrows(RuntimeException.class, () -> heap.freeAll(out, 0, n));
                        assertEquals(inUse.size() + (n - 1 - twice), heap.usedBlocks(),
                                "the blocks before the one freed twice are free, those after it still in use");
                        heap.freeAll(out, twice + 1, n);
                    } else {
                        heap.freeAll(out, 0, n);
                    }
                }
                default -> {
                    if (r.nextInt(8) == 0) {
                        side.grow().accept(1);
                        assertTrue(heap.totalBlocks() > total, "the heap grew");
                        total = heap.totalBlocks();
                    }
                }
            }
            assertEquals(inUse.size(), heap.usedBlocks(), "blocks in use after step " + step);
            if (format3) {
                assertTrue(heap.freeBlocks() <= total - inUse.size(), "free segments' blocks after step " + step);
            } else {
                assertEquals(total - inUse.size(), heap.freeBlocks(), "free blocks after step " + step);
            }
        }
        for (long b; (b = heap.allocate(c, 0)) >= 0; ) {  // every block can be taken, and none twice
            taken(heap, b, c, valueBytes, inUse, live);
        }
        assertEquals(total, inUse.size());
        assertFalse(heap.canTake(c, 0));
        for (long b : live) {
            heap.free(b);
        }
        assertEquals(total, heap.freeBlocks());
        assertEquals(0, heap.usedBlocks());
    }

    private static void taken(BlockHeap heap, long b, int c, int valueBytes, Set<Long> inUse, List<Long> live) {
        assertTrue(b >= 0, "no block where the free count had one");
        assertTrue(heap.isBlock(b, c), b + " is no block");
        assertTrue(heap.spans(b, valueBytes), b + " lies outside the heap's extent");
        assertFalse(heap.isBlock(b + 8, c), b + 8 + " inside a block is taken for one");
        assertTrue(inUse.add(b), b + " handed out twice");
        live.add(b);
    }

    /** Threads taking and giving back blocks at once, one at a time and in grants: none handed out twice, every one back at the end. */
    @ParameterizedTest(name = "format 3: {0}")
    @ValueSource(booleans = {false, true})
    void threadsTakingAndGivingBackAtOnceShareNoBlock(boolean format3) throws Exception {
        int c = ValueClasses.classOf(128);
        Side side = side(format3, c, 4);
        BlockHeap heap = side.heap();
        int cls = format3 ? c : -1;
        long total = heap.totalBlocks();
        int threads = 4;
        Set<Long> held = ConcurrentHashMap.newKeySet();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            all.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    Random r = new Random(id);
                    List<Long> mine = new ArrayList<>();
                    long[] grant = new long[32];
                    for (int i = 0; i < 20_000; i++) {
                        if (r.nextBoolean() && mine.size() < 400) {
                            int got = heap.allocateNear(grant, 1 + r.nextInt(grant.length), cls, BlockHeap.UPDATE_RESERVE);
                            for (int k = 0; k < got; k++) {
                                if (!held.add(grant[k])) {
                                    throw new AssertionError(grant[k] + " handed out twice");
                                }
                                mine.add(grant[k]);
                            }
                        } else if (!mine.isEmpty()) {
                            long b = mine.remove(mine.size() - 1);
                            held.remove(b);
                            heap.free(b);
                        }
                    }
                    for (long b : mine) {
                        held.remove(b);
                        heap.free(b);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread t : all) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(total, heap.freeBlocks(), "every block back");
    }

    /**
     * Recovery's rebuild ({@link PoolHeap}) on both heaps: from the blocks in use after random takes
     * and gives, every one marks once (a second mark answers false: two slots naming one block), the
     * free count is the total less them, and every block taken after it is one not in use.
     */
    @Property(tries = 100)
    void bothHeapsRebuildFromTheBlocksInUse(@ForAll boolean format3,
                                            @ForAll @IntRange(min = 0, max = 40) int valueClass,
                                            @ForAll @IntRange(min = 1, max = 3) int segments,
                                            @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seed) {
        PoolHeap heap = (PoolHeap) side(format3, valueClass, segments).heap();
        int c = format3 ? valueClass : -1;
        List<Long> live = takeAndGive(heap, c, new Random(seed), 300);
        long total = heap.totalBlocks();
        heap.startRebuild();
        for (long b : live) {
            assertTrue(heap.isBlock(b, c));
            assertTrue(heap.markUsed(b, c), "block " + b + " marked once");
        }
        if (!live.isEmpty()) {
            assertFalse(heap.markUsed(live.get(0), c), "a second slot naming a block is told apart");
        }
        heap.finishRebuild();
        assertEquals(total, heap.totalBlocks());
        assertEquals(live.size(), heap.usedBlocks());
        if (!format3) {
            assertEquals(total - live.size(), heap.freeBlocks());
        }
        Set<Long> inUse = new HashSet<>(live);
        for (long b; (b = heap.allocate(c, 0)) >= 0; ) {
            assertTrue(inUse.add(b), "block " + b + " handed out while in use");
        }
        assertEquals(total, inUse.size(), "every block is in use or was free");
        assertEquals(0, heap.freeBlocks());
    }

    /**
     * Regions a resize hands to format 3's heap (the emptied bottom level) need not hold whole
     * segments: the heap takes the whole segments from the region's first 16-byte boundary and leaves
     * the rest, and a region smaller than a segment adds nothing.
     */
    @ParameterizedTest(name = "value class {0}")
    @ValueSource(ints = {0, 7, 20, 40})
    void formatThreesHeapTakesTheWholeSegmentsOfARegion(int valueClass) {
        int seg = SizeClassHeap.SEGMENT_BYTES;
        SegmentHeap heap = heapOfClass(valueClass);
        heap.addRegion(FIRST + 8, seg - 8);
        assertEquals(0, heap.totalBlocks(), "less than a segment from the boundary: nothing");
        assertEquals(0, heap.totalBytes());
        heap.addRegion(2L * FIRST + 4, 2L * seg + seg / 2);
        assertEquals(2L * seg, heap.totalBytes());
        assertTrue(heap.totalBlocks() > 0 || ValueClasses.blockBytes(valueClass) > 2 * seg);
        assertFalse(heap.isBlock(2L * FIRST + 4, valueClass), "the region's unaligned start is no block");
        if (heap.totalBlocks() > 0) {
            assertTrue(heap.isBlock(2L * FIRST + 16, valueClass), "the first block starts on the boundary");
            long b = heap.allocate(valueClass, 0);
            assertTrue(b >= 2L * FIRST + 16 && b + ValueClasses.blockBytes(valueClass) <= 2L * FIRST + 16 + 2L * seg);
        }
    }

    /**
     * The close record's copy of format 3's heap: unit numbers and offsets are each other's inverse
     * over regions added in any order (some too small for a block of a large class), and a bitmap of
     * the units where blocks in use start, with the class each segment holds (framed and bare: a bare
     * block has no header to name it), restores a heap of the same regions to the same blocks in use,
     * no scan.
     */
    @Property(tries = 100)
    void formatThreesBitmapRestoresTheBlocksInUse(@ForAll @IntRange(min = 0, max = 127) int valueClass,
                                                  @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seed) {
        Random r = new Random(seed);
        int seg = SizeClassHeap.SEGMENT_BYTES;
        long[][] regions = new long[2 + r.nextInt(4)][];
        for (int i = 0; i < regions.length; i++) {  // gaps between regions, added in a shuffled order
            regions[i] = new long[] {FIRST + (long) i * 64 * seg, (1 + r.nextInt(40)) * (long) seg + r.nextInt(seg)};
        }
        Collections.shuffle(Arrays.asList(regions), r);
        int maxValue = ValueClasses.blockBytes(valueClass) - ValueClasses.HEADER_BYTES;
        SegmentHeap heap = new SegmentHeap(maxValue, false);
        SegmentHeap again = new SegmentHeap(maxValue, false);
        for (long[] g : regions) {
            heap.addRegion(g[0], g[1]);
            again.addRegion(g[0], g[1]);
        }
        for (long n = 0; n < heap.units(); n += 1 + r.nextInt(64)) {
            assertEquals(n, heap.unitNumber(heap.offsetOfUnit(n)), "unit " + n);
        }
        Map<Long, Integer> classOf = new HashMap<>();
        for (int i = 0; i < 400; i++) {  // blocks of the pool's classes up to its own, some given back
            if (!classOf.isEmpty() && r.nextInt(3) == 0) {
                long b = new ArrayList<>(classOf.keySet()).get(r.nextInt(classOf.size()));
                classOf.remove(b);
                heap.free(b);
            } else {
                int c = r.nextInt(valueClass + 1);
                long b = heap.allocate(c, 0);
                if (b >= 0) {
                    classOf.put(b, c);
                }
            }
        }
        long[] bits = heap.usedBits();
        assertEquals(heap.bitmapWords(), bits.length);
        byte[] classes = heap.segmentClasses();
        again.restore(bits, classOf.size(), classes);
        assertArrayEquals(classes, again.segmentClasses(), "each segment holds the class it held");
        assertEquals(heap.freeBlocks(), again.freeBlocks());
        assertEquals(heap.totalBlocks(), again.totalBlocks());
        assertEquals(classOf.size(), again.usedBlocks());
        assertArrayEquals(bits, again.usedBits(), "the restored heap records the same blocks");
        for (long b : classOf.keySet()) {
            again.free(b);  // each block restored in use, of its class
        }
        assertEquals(0, again.usedBlocks());
        assertEquals(again.totalBlocks(), again.freeBlocks(), "every segment back");
    }

    /**
     * The heap as the GPU's one bitmap numbers it ({@link PoolHeap#oneSizeLayout}), on both heaps: each
     * block in use is the block its layout numbers it (chunk by offset, stride the block), the bitmap
     * marks exactly those, bits past the last block are set, and a bitmap given back
     * ({@link PoolHeap#restoreOneSize}: blocks freed and taken meanwhile, as a batch on the GPU would)
     * leaves the heap with exactly its blocks in use, every other block free; format 3's segments left
     * with none go back to the free segments. Format 3 refuses the view while a segment holds another
     * class (a value shorter than the value size).
     */
    @Property(tries = 100)
    void bothHeapsGoToOneBitmapAndBack(@ForAll boolean format3,
                                       @ForAll @IntRange(min = 0, max = 40) int valueClass,
                                       @ForAll @IntRange(min = 1, max = 4) int segments,
                                       @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seed) {
        Assume.that(!format3 || ValueClasses.blockBytes(valueClass) <= SizeClassHeap.SMALL_BLOCK_MAX);
        Random r = new Random(seed);
        Side side = side(format3, valueClass, segments);
        side.grow().accept(1 + r.nextInt(3));  // a second region
        PoolHeap heap = (PoolHeap) side.heap();
        int c = format3 ? valueClass : -1;
        List<Long> live = takeAndGive(heap, c, r, 200);
        long total = heap.totalBlocks();
        TableKernels.HeapLayout l = heap.oneSizeLayout();
        long[] bits = heap.oneSizeUsedBits();
        assertEquals(l.words(), bits.length);
        long blocks = 0;
        Map<Long, Long> numberOf = new TreeMap<>();
        for (int i = 0; i < l.chunkOffsets().length; i++) {
            assertTrue(i == 0 || l.chunkOffsets()[i - 1] < l.chunkOffsets()[i], "chunks in order of offsets");
            assertEquals(blocks, l.firstBlocks()[i]);
            for (long j = 0; j < l.chunkLengths()[i] / l.stride(); j++) {
                numberOf.put(l.chunkOffsets()[i] + j * l.stride(), blocks + j);
            }
            blocks += l.chunkLengths()[i] / l.stride();
        }
        assertEquals(total, blocks, "the bitmap numbers every block of the pool's size");
        Set<Long> inUse = new HashSet<>(live);
        for (Map.Entry<Long, Long> e : numberOf.entrySet()) {
            long n = e.getValue();
            assertEquals(inUse.contains(e.getKey()), (bits[(int) (n >>> 6)] & (1L << n)) != 0, "block " + e.getKey());
        }
        for (long n = blocks; n < 64L * bits.length; n++) {
            assertTrue((bits[(int) (n >>> 6)] & (1L << n)) != 0, "padding bit " + n);
        }
        // The GPU's batches free some blocks and take others, then the bitmap comes back.
        List<Long> offsets = new ArrayList<>(numberOf.keySet());
        for (int k = 0; k < 50; k++) {
            long o = offsets.get(r.nextInt(offsets.size()));
            long n = numberOf.get(o);
            bits[(int) (n >>> 6)] ^= 1L << n;
            if (!inUse.remove(o)) {
                inUse.add(o);
            }
        }
        heap.restoreOneSize(bits);
        assertEquals(inUse.size(), heap.usedBlocks());
        assertEquals(total, heap.totalBlocks());
        if (format3) {
            long heldSegments = inUse.stream().map(o -> o / SizeClassHeap.SEGMENT_BYTES).distinct().count();
            assertEquals(total - heldSegments * (total / numberOfSegments(l)), heap.freeBlocks(),
                    "segments with no block in use are free again");
        } else {
            assertEquals(total - inUse.size(), heap.freeBlocks());
        }
        for (long o : inUse) {
            heap.free(o);  // each in use, of its class
        }
        assertEquals(0, heap.usedBlocks());
        if (format3 && valueClass > 0) {
            long shorter = heap.allocate(valueClass - 1, 0);
            assertTrue(shorter >= 0);
            assertThrows(IllegalStateException.class, heap::oneSizeLayout, "a segment of another class");
        }
    }

    /**
     * Format 3's heap as the GPU keeps it (segments, their classes, the close record's bitmap of 16-byte
     * units: {@link PoolHeap#segments}) and back through {@link PoolHeap#restore}: the form names every
     * block in use at its unit and every segment's class; blocks the GPU took (a block start of a held
     * segment's class, or of a segment it gave a class) and freed (a segment left empty is free again)
     * come back as they are; a mark that is no block of its segment's class is refused.
     */
    @Property(tries = 100)
    void formatThreesSegmentsGoToTheGpuFormAndBack(@ForAll @IntRange(min = 1, max = 6) int segments,
                                                   @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seed) {
        Random r = new Random(seed);
        int seg = SizeClassHeap.SEGMENT_BYTES;
        SegmentHeap heap = new SegmentHeap(4000, false);
        heap.addRegion(FIRST, (long) segments * seg);
        heap.addRegion(FIRST + (segments + 2L) * seg, 2L * seg);  // a second region, a gap before it
        int maxClass = ValueClasses.classOf(4000);
        TreeMap<Long, Integer> live = new TreeMap<>();
        for (int step = 0; step < 300; step++) {
            if (!live.isEmpty() && r.nextInt(3) == 0) {
                long b = new ArrayList<>(live.keySet()).get(r.nextInt(live.size()));
                heap.free(b);
                live.remove(b);
            } else {
                int c = r.nextInt(maxClass + 1);
                long b = heap.allocate(c, 0);
                if (b >= 0) {
                    live.put(b, c);
                }
            }
        }
        TableKernels.HeapSegments g = heap.segments();
        assertEquals(segments + 2, g.offsets().length);
        assertEquals(g.offsets().length, g.classes().length);
        assertEquals(64L * g.offsets().length, g.unitBits().length, "64 words of units a segment");
        assertEquals(heap.fullClass(), g.fullClass());
        long[] bits = g.unitBits();
        int marked = 0;
        for (long w : bits) {
            marked += Long.bitCount(w);
        }
        assertEquals(live.size(), marked, "one bit a block in use");
        for (Map.Entry<Long, Integer> e : live.entrySet()) {
            int s = Arrays.binarySearch(g.offsets(), e.getKey() - (e.getKey() - FIRST) % seg);
            assertTrue(s >= 0, "block " + e.getKey() + " in a segment");
            assertEquals(e.getValue().intValue(), g.classes()[s], "the class of block " + e.getKey() + "'s segment");
            long unit = 4096L * s + (e.getKey() - g.offsets()[s]) / 16;
            assertTrue((bits[(int) (unit >>> 6)] & (1L << unit)) != 0, "block " + e.getKey() + "'s unit");
        }
        // The GPU's batches: a free, then a take in a segment of its class, or in a free one it gives a class.
        for (int k = 0; k < 40; k++) {
            if (!live.isEmpty() && r.nextBoolean()) {
                long b = new ArrayList<>(live.keySet()).get(r.nextInt(live.size()));
                int s = Arrays.binarySearch(g.offsets(), b - (b - FIRST) % seg);
                long unit = 4096L * s + (b - g.offsets()[s]) / 16;
                bits[(int) (unit >>> 6)] &= ~(1L << unit);
                live.remove(b);
                if (live.keySet().stream().noneMatch(o -> o >= g.offsets()[s] && o < g.offsets()[s] + seg)) {
                    g.classes()[s] = -1;
                }
            } else {
                int s = r.nextInt(g.offsets().length);
                int c = g.classes()[s] >= 0 ? g.classes()[s] : r.nextInt(maxClass + 1);
                int block = ValueClasses.blockBytes(c);
                int j = r.nextInt(seg / block);
                long b = g.offsets()[s] + (long) j * block;
                long unit = 4096L * s + (long) j * block / 16;
                if ((bits[(int) (unit >>> 6)] & (1L << unit)) == 0) {
                    bits[(int) (unit >>> 6)] |= 1L << unit;
                    g.classes()[s] = (byte) c;
                    live.put(b, c);
                }
            }
        }
        heap.restore(bits, live.size(), g.classes());
        assertEquals(live.size(), heap.usedBlocks());
        for (Map.Entry<Long, Integer> e : live.entrySet()) {
            assertTrue(heap.isBlock(e.getKey(), e.getValue()), e.getKey() + " is a block of class " + e.getValue());
            heap.free(e.getKey());
        }
        assertEquals(0, heap.usedBlocks());
        assertEquals(heap.totalBlocks(), heap.freeBlocks(), "every segment free again");
        // A mark one unit past a block start of a segment of 32-byte blocks is no block of its class.
        long[] wrong = new long[bits.length];
        byte[] classes = new byte[g.classes().length];
        Arrays.fill(classes, (byte) -1);
        classes[0] = 0;  // class 0: blocks of 32 bytes, two units each
        wrong[0] = 1L << 1;
        assertThrows(IllegalStateException.class, () -> heap.restore(wrong, 1, classes));
    }

    private static long numberOfSegments(TableKernels.HeapLayout l) {
        return l.chunkOffsets().length;
    }

    /**
     * Format 3's heap with blocks of many classes at once, as a pool of values of any length holds
     * them: against a model of byte ranges, no two blocks in use overlap, each lies in a region and is a
     * block of its class, the count of blocks in use is exact, a take fails only where
     * {@link SegmentHeap#canTake} says so, every class's block can be taken after a growth, and once
     * every block is given back every segment is free again.
     */
    @Property(tries = 100)
    void formatThreesHeapHoldsBlocksOfEveryClassApart(@ForAll @IntRange(min = 1, max = 8) int segments,
                                                      @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seed) {
        Random r = new Random(seed);
        int seg = SizeClassHeap.SEGMENT_BYTES;
        SegmentHeap heap = new SegmentHeap(200_000, false);  // classes up to runs of several segments
        long[] end = {FIRST};
        heap.addRegion(end[0], (long) segments * seg);
        end[0] += (long) segments * seg + seg;  // a gap before the next region
        TreeMap<Long, Integer> live = new TreeMap<>();
        int maxClass = ValueClasses.classOf(200_000);
        for (int step = 0; step < 600; step++) {
            if (!live.isEmpty() && r.nextInt(3) == 0) {
                long b = new ArrayList<>(live.keySet()).get(r.nextInt(live.size()));
                live.remove(b);
                heap.free(b);
            } else {
                // Mostly small values, a few large ones (runs of segments).
                int c = r.nextInt(10) == 0 ? r.nextInt(maxClass + 1) : r.nextInt(Math.min(maxClass, 30) + 1);
                boolean room = heap.canTake(c, 0);
                long b = heap.allocate(c, 0);
                assertEquals(room, b >= 0, "class " + c + ": a take where the heap said it had room: " + room);
                if (b < 0) {
                    heap.addRegion(end[0], (long) (1 + r.nextInt(4)) * seg + ValueClasses.blockBytes(c));
                    end[0] += 64L * seg;
                    b = heap.allocate(c, 0);
                    assertTrue(b >= 0, "class " + c + " after a growth");
                }
                assertTrue(heap.isBlock(b, c), b + " is no block of class " + c);
                Map.Entry<Long, Integer> below = live.floorEntry(b);
                assertTrue(below == null || below.getKey() + ValueClasses.blockBytes(below.getValue()) <= b,
                        "block " + b + " of class " + c + " overlaps " + below);
                Map.Entry<Long, Integer> above = live.ceilingEntry(b);
                assertTrue(above == null || b + ValueClasses.blockBytes(c) <= above.getKey(),
                        "block " + b + " of class " + c + " overlaps " + above);
                live.put(b, c);
            }
            assertEquals(live.size(), heap.usedBlocks(), "blocks in use after step " + step);
        }
        for (long b : live.keySet()) {
            heap.free(b);
        }
        assertEquals(0, heap.usedBlocks());
        assertEquals(heap.totalBlocks(), heap.freeBlocks(), "every segment back");
    }

    /** {@code steps} random takes and gives on {@code heap} (a third gives while any block is taken); {@return the blocks taken} */
    private static List<Long> takeAndGive(BlockHeap heap, int c, Random r, int steps) {
        List<Long> live = new ArrayList<>();
        for (int i = 0; i < steps; i++) {
            if (!live.isEmpty() && r.nextInt(3) == 0) {
                heap.free(live.remove(r.nextInt(live.size())));
            } else {
                long b = heap.allocate(c, 0);
                if (b >= 0) {
                    live.add(b);
                }
            }
        }
        return live;
    }
}
