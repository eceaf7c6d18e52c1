package org.gphash.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;

import org.gphash.format.HeapChunk;
import org.junit.jupiter.api.Test;

/**
 * The value heap follows the data: batch allocation takes the lowest free blocks (so freed space is
 * reused from the start and the heap's occupied range stays compact), and growth adds a quarter.
 */
class CompactHeapTest {

    private static final int STRIDE = 128;

    /** A heap as recovery leaves it: every block free. */
    private static ValueHeap heap(List<HeapChunk> chunks) {
        ValueHeap h = new ValueHeap(STRIDE, chunks);
        h.startRebuild();
        h.finishRebuild();
        return h;
    }

    @Test
    void batchAllocationTakesTheLowestFreeBlocks() {
        ValueHeap heap = heap(List.of(new HeapChunk(1 << 20, 1024L * STRIDE), new HeapChunk(8 << 20, 1024L * STRIDE)));
        long[] first = new long[1500];
        assertEquals(1500, heap.allocateMany(first, 1500));
        for (int i = 0; i < 1024; i++) {
            assertEquals((1 << 20) + (long) i * STRIDE, first[i], "block " + i);
        }
        assertEquals(8 << 20, first[1024], "the second chunk after the first is full");
        // Free a scattered few; the next allocation takes exactly those, in address order, before new space.
        long[] freed = {first[700], first[3], first[1200], first[64]};
        for (long f : freed) {
            heap.free(f);
        }
        long[] again = new long[5];
        assertEquals(5, heap.allocateMany(again, 5));
        long[] sorted = freed.clone();
        Arrays.sort(sorted);
        assertEquals(sorted[0], again[0]);
        assertEquals(sorted[1], again[1]);
        assertEquals(sorted[2], again[2]);
        assertEquals(sorted[3], again[3]);
        assertEquals(first[1499] + STRIDE, again[4], "then the lowest never-used block");
    }

    @Test
    void usedBitsRoundTrip() {
        ValueHeap heap = heap(List.of(new HeapChunk(4096, 200L * STRIDE)));
        long[] b = new long[77];
        heap.allocateMany(b, 77);
        long[] bits = heap.usedBits();
        ValueHeap other = new ValueHeap(STRIDE, List.of(new HeapChunk(4096, 200L * STRIDE)));
        other.startRebuild();
        other.markUsedBits(bits);
        other.finishRebuild();
        assertEquals(heap.freeBlocks(), other.freeBlocks());
        assertEquals(200 - 77, other.freeBlocks());
        assertTrue(Arrays.equals(bits, other.usedBits()));
    }
}
