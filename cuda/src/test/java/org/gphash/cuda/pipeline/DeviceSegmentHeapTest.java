package org.gphash.cuda.pipeline;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.gphash.format.ValueClasses;
import org.gphash.table.SizeClassHeap;

/**
 * The room a batch of values of many lengths is given before it runs on the GPU
 * ({@link DeviceSegmentHeap#segmentsFor}, from the bytes its blocks take as the count kernel sums them):
 * enough free segments for any mix of classes, each class filling its own segments with no room in
 * the segments classes already hold, so that the take never finds the heap short.
 */
class DeviceSegmentHeapTest {

    @Property(tries = 500)
    void theFreeSegmentsAskedForHoldEveryMixOfClasses(@ForAll long seed) {
        Random r = new Random(seed);
        Set<Integer> classes = new HashSet<>();
        int count = 1 + r.nextInt(ValueClasses.COUNT);
        long bytes = 0;
        long segments = 0;
        for (int i = 0; i < count; i++) {
            int c = r.nextInt(ValueClasses.COUNT);
            int block = ValueClasses.blockBytes(c);
            if (block > SizeClassHeap.SMALL_BLOCK_MAX || !classes.add(c)) {
                continue;  // the GPU's heap takes blocks inside one segment; one class once
            }
            long writes = r.nextInt(4) == 0 ? 1 + r.nextInt(3) : r.nextInt(1 << 20);
            int perSegment = SizeClassHeap.SEGMENT_BYTES / block;
            bytes += writes * block;
            segments += (writes + perSegment - 1) / perSegment;
        }
        long asked = DeviceSegmentHeap.segmentsFor(bytes);
        assertTrue(segments <= asked, segments + " segments needed, " + asked + " asked for " + bytes + " bytes of blocks");
    }
}
