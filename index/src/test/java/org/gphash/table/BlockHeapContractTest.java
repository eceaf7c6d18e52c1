package org.gphash.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

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
 * in use on both heaps behind it: format 2's {@link ValueHeap} and format 3's heap of one class
 * ({@link OneClassHeap}, issue 53). No block is handed out twice, every block handed out is a block
 * inside the heap's extent, the free count is the total less the blocks in use after every call, a
 * take that would dip into the kept blocks is refused, a block given back twice throws (the ones
 * before it counted free), and the heap grows by whole regions; and what the pool does with a heap
 * beyond that ({@link PoolHeap}): recovery's rebuild from the blocks in use, regions of any size.
 */
class BlockHeapContractTest {

    /** Regions (format 3) and chunks (format 2) start here and follow each other. */
    private static final long FIRST = 1 << 16;

    /** A heap of one side, and how to grow it by a number of segments' worth of blocks. */
    private record Side(BlockHeap heap, IntConsumer grow) {
    }

    /**
     * A heap of class {@code c} with {@code segments} segments' worth of blocks: format 3's, or format
     * 2's with as many blocks as format 3's regions hold (chunks of that many blocks).
     */
    private static Side side(boolean format3, int c, int segments) {
        int block = ValueClasses.blockBytes(c);
        OneClassHeap regions = new OneClassHeap(c);
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
                    long b = heap.allocate(keep);
                    if (freeBefore <= keep) {
                        assertEquals(-1, b, "a take into the kept blocks");
                    } else {
                        taken(heap, b, valueBytes, inUse, live);
                    }
                }
                case 2 -> {
                    int n = 1 + r.nextInt(out.length);
                    long keep = r.nextBoolean() ? 0 : BlockHeap.UPDATE_RESERVE;
                    int got = heap.allocateNear(out, n, keep);
                    assertEquals(Math.max(0, Math.min(n, freeBefore - keep)), got, "blocks of a grant");
                    for (int i = 0; i < got; i++) {
                        taken(heap, out[i], valueBytes, inUse, live);
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
                        assertEquals(total - inUse.size() - (n - 1 - twice), heap.freeBlocks(),
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
            assertEquals(total - inUse.size(), heap.freeBlocks(), "free blocks after step " + step);
        }
        while (heap.freeBlocks() > 0) {  // every block can be taken, and none twice
            taken(heap, heap.allocate(0), valueBytes, inUse, live);
        }
        assertEquals(total, inUse.size());
        assertEquals(-1, heap.allocate(0));
        for (long b : live) {
            heap.free(b);
        }
        assertEquals(total, heap.freeBlocks());
    }

    private static void taken(BlockHeap heap, long b, int valueBytes, Set<Long> inUse, List<Long> live) {
        assertTrue(b >= 0, "no block where the free count had one");
        assertTrue(heap.isBlock(b), b + " is no block");
        assertTrue(heap.spans(b, valueBytes), b + " lies outside the heap's extent");
        assertFalse(heap.isBlock(b + 8), b + 8 + " inside a block is taken for one");
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
                            int got = heap.allocateNear(grant, 1 + r.nextInt(grant.length), BlockHeap.UPDATE_RESERVE);
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
        List<Long> live = takeAndGive(heap, new Random(seed), 300);
        long total = heap.totalBlocks();
        heap.startRebuild();
        for (long b : live) {
            assertTrue(heap.isBlock(b));
            assertTrue(heap.markUsed(b), "block " + b + " marked once");
        }
        if (!live.isEmpty()) {
            assertFalse(heap.markUsed(live.get(0)), "a second slot naming a block is told apart");
        }
        heap.finishRebuild();
        assertEquals(total, heap.totalBlocks());
        assertEquals(total - live.size(), heap.freeBlocks());
        Set<Long> inUse = new HashSet<>(live);
        for (long b; (b = heap.allocate(0)) >= 0; ) {
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
        OneClassHeap heap = new OneClassHeap(valueClass);
        heap.addRegion(FIRST + 8, seg - 8);
        assertEquals(0, heap.totalBlocks(), "less than a segment from the boundary: nothing");
        assertEquals(0, heap.totalBytes());
        heap.addRegion(2L * FIRST + 4, 2L * seg + seg / 2);
        assertEquals(2L * seg, heap.totalBytes());
        assertTrue(heap.totalBlocks() > 0 || ValueClasses.blockBytes(valueClass) > 2 * seg);
        assertFalse(heap.isBlock(2L * FIRST + 4), "the region's unaligned start is no block");
        if (heap.totalBlocks() > 0) {
            assertTrue(heap.isBlock(2L * FIRST + 16), "the first block starts on the boundary");
            long b = heap.allocate(0);
            assertTrue(b >= 2L * FIRST + 16 && b + ValueClasses.blockBytes(valueClass) <= 2L * FIRST + 16 + 2L * seg);
        }
    }

    /**
     * The close record's copy of format 3's heap: block numbers and offsets are each other's inverse
     * over regions added in any order (some too small for a block of a large class), and a bitmap of
     * the blocks in use restores a heap of the same regions to the same blocks in use, no scan.
     */
    @Property(tries = 100)
    void formatThreesBitmapRestoresTheBlocksInUse(@ForAll @IntRange(min = 0, max = 63) int valueClass,
                                                  @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long seed) {
        Random r = new Random(seed);
        int seg = SizeClassHeap.SEGMENT_BYTES;
        long[][] regions = new long[2 + r.nextInt(4)][];
        for (int i = 0; i < regions.length; i++) {  // gaps between regions, added in a shuffled order
            regions[i] = new long[] {FIRST + (long) i * 64 * seg, (1 + r.nextInt(40)) * (long) seg + r.nextInt(seg)};
        }
        Collections.shuffle(Arrays.asList(regions), r);
        OneClassHeap heap = new OneClassHeap(valueClass);
        OneClassHeap again = new OneClassHeap(valueClass);
        for (long[] g : regions) {
            heap.addRegion(g[0], g[1]);
            again.addRegion(g[0], g[1]);
        }
        for (long n = 0; n < heap.totalBlocks(); n++) {
            long offset = heap.offsetOf(n);
            assertTrue(heap.isBlock(offset), "block " + n + " at " + offset);
            assertEquals(n, heap.blockNumber(offset));
        }
        List<Long> live = takeAndGive(heap, r, 400);
        long[] bits = heap.usedBits();
        assertEquals(heap.bitmapWords(), bits.length);
        again.restore(bits, live.size());
        assertEquals(heap.freeBlocks(), again.freeBlocks());
        assertEquals(heap.totalBlocks(), again.totalBlocks());
        Set<Long> inUse = new HashSet<>(live);
        for (long b; (b = again.allocate(0)) >= 0; ) {
            assertTrue(inUse.add(b), "block " + b + " handed out while in use");
        }
        assertEquals(heap.totalBlocks(), inUse.size());
    }

    /** {@code steps} random takes and gives on {@code heap} (a third gives while any block is taken); {@return the blocks taken} */
    private static List<Long> takeAndGive(BlockHeap heap, Random r, int steps) {
        List<Long> live = new ArrayList<>();
        for (int i = 0; i < steps; i++) {
            if (!live.isEmpty() && r.nextInt(3) == 0) {
                heap.free(live.remove(r.nextInt(live.size())));
            } else {
                long b = heap.allocate(0);
                if (b >= 0) {
                    live.add(b);
                }
            }
        }
        return live;
    }
}
