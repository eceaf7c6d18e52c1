package org.gphash.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CyclicBarrier;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The set of buckets host writes changed, against a plain sorted set. */
class DirtyBucketsTest {

    /** Marks and drains in chunks of any size, interleaved: every mark comes out once, nothing else does. */
    @Property(tries = 300)
    void drainsReturnEachMarkedBucketOnce(@ForAll @LongRange(min = 1, max = 300_000) long buckets,
                                          @ForAll @Size(max = 400) List<@LongRange(min = 0, max = 299_999) Long> marks,
                                          @ForAll @IntRange(min = 1, max = 70) int chunk,
                                          @ForAll @IntRange(min = 0, max = 400) int drainAfter) {
        DirtyBuckets dirty = new DirtyBuckets(buckets);
        TreeSet<Long> model = new TreeSet<>();
        List<Long> drained = new ArrayList<>();
        long[] out = new long[chunk];
        int i = 0;
        for (long m : marks) {
            long b = m % buckets;
            dirty.mark(b);
            model.add(b);
            if (++i == drainAfter) {  // a drain in the middle: what it took is gone, later marks come back
                int n = dirty.drainTo(out);
                for (int k = 0; k < n; k++) {
                    assertTrue(model.remove(out[k]), "drained bucket " + out[k] + " was marked");
                }
            }
        }
        assertEquals(model.isEmpty(), dirty.isEmpty());
        for (int n; (n = dirty.drainTo(out)) > 0; ) {
            for (int k = 0; k < n; k++) {
                drained.add(out[k]);
            }
        }
        assertEquals(List.copyOf(model), drained.stream().sorted().toList(), "every marked bucket, once");
        assertEquals(model.size(), drained.stream().distinct().count());
        assertTrue(dirty.isEmpty());
        assertEquals(0, dirty.drainTo(out));
    }

    @Test
    void marksFromManyThreadsAtOnceAreAllKept() throws Exception {
        int threads = 8;
        long buckets = 1 << 16;
        DirtyBuckets dirty = new DirtyBuckets(buckets);
        CyclicBarrier start = new CyclicBarrier(threads);
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers[t] = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                // Neighbouring buckets from every thread: the same words and summary words raced for.
                for (long b = id; b < buckets; b += threads) {
                    dirty.mark(b);
                    dirty.mark((b * 7919) % buckets);
                }
            });
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        long[] out = new long[1000];
        boolean[] seen = new boolean[(int) buckets];
        long total = 0;
        for (int n; (n = dirty.drainTo(out)) > 0; ) {
            for (int k = 0; k < n; k++) {
                assertFalse(seen[(int) out[k]], "bucket " + out[k] + " drained twice");
                seen[(int) out[k]] = true;
            }
            total += n;
        }
        assertEquals(buckets, total, "every bucket was marked by some thread");
    }

    @Test
    void growsOnlyWhenEmptyAndRefusesBucketsOutsideTheTable() {
        DirtyBuckets dirty = new DirtyBuckets(100);
        assertThrows(IndexOutOfBoundsException.class, () -> dirty.mark(100));
        assertThrows(IndexOutOfBoundsException.class, () -> dirty.mark(-1));
        dirty.mark(99);
        assertThrows(IllegalStateException.class, () -> dirty.ensureBuckets(1000));
        dirty.ensureBuckets(50);  // smaller: nothing to do, the mark stays
        assertFalse(dirty.isEmpty());
        long[] out = new long[4];
        assertEquals(1, dirty.drainTo(out));
        assertEquals(99, out[0]);
        dirty.ensureBuckets(1000);
        assertEquals(1000, dirty.capacity());
        dirty.mark(999);
        assertEquals(1, dirty.drainTo(out));
        assertEquals(999, out[0]);
    }
}
