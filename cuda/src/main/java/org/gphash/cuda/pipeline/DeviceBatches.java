package org.gphash.cuda.pipeline;

import java.util.Arrays;

import org.gphash.cuda.cache.BucketCache;

/**
 * Device-resident batches on the mirror: columns already in GPU memory, run in slices of
 * {@link MirrorRuns#maxSlice}; a slice of gets only may run in one launch on the small reads' kernel
 * when the router says so.
 */
final class DeviceBatches {

    private final MirrorRuns runs;
    private final SmallReads small;

    DeviceBatches(MirrorRuns runs, SmallReads small) {
        this.runs = runs;
        this.small = small;
    }

    /**
     * {@code lengthsAt}: each value's length (format 3's values of any length), or 0 where every value
     * has the value size; {@code outLengthsAt}: where each value read's length goes, or 0.
     */
    void executeOnDevice(long n, long kindsAt, long keysAt, long valuesAt, long lengthsAt, long codesAt, long outAt,
                         long outLengthsAt) {
        int ks = runs.geometry.keySize();
        int vs = runs.geometry.valueSize();
        int slice = MirrorRuns.maxSlice(vs);
        for (long first = 0; first < n; first += slice) {
            long m = Math.min(slice, n - first);
            long k = kindsAt + first;
            long key = keysAt + first * ks;
            long val = valuesAt == 0 ? 0 : valuesAt + first * vs;
            long len = lengthsAt == 0 ? 0 : lengthsAt + first * 4;
            long code = codesAt + first;
            long o = outAt == 0 ? 0 : outAt + first * vs;
            long outLen = outLengthsAt == 0 ? 0 : outLengthsAt + first * 4;
            long[] counts = runs.pipeline.countKinds(runs.stream,
                    new BatchPipeline.DeviceOps(m, k, key, val, code, o, 0, 0, 0, len, outLen), runs.parts.tableParams());
            if (counts[0] > 0 && val == 0) {
                throw new IllegalArgumentException("a device batch with writes needs its values buffer");
            }
            if (counts[1] > 0 && o == 0) {
                throw new IllegalArgumentException("a device batch with reads needs its out buffer");
            }
            if (counts[DeviceKindCount.COUNT_TOO_LONG] > 0) {
                throw new IllegalArgumentException(counts[DeviceKindCount.COUNT_TOO_LONG] + " values of a device batch are longer"
                        + " than the value size (" + vs + " bytes), from operation " + first + " on; nothing of the batch from"
                        + " there ran");
            }
            if (len != 0 && counts[0] > 0) {
                runs.ensureFreeSegments(DeviceSegmentHeap.segmentsFor(counts[DeviceKindCount.COUNT_BLOCK_BYTES]),
                        counts[DeviceKindCount.COUNT_RUN_WRITES] == 0 ? null
                                : Arrays.copyOfRange(counts, DeviceKindCount.COUNT_RUN_CLASSES, DeviceKindCount.COUNT_WORDS));
            }
            if (len != 0 || outLen != 0) {
                // Values of many lengths take the pipeline, whose stages carry them (not the small reads' one launch).
                // The room for them is the free segments just ensured; the counts of the pool's class
                // (what batches of values of the value size are sized by) are read back after.
                runs.runSlice(m, k, key, val, len, code, o, outLen, 0, counts[1] > 0, counts[0] + counts[2] > 0);
                if (len != 0 && counts[0] > 0) {
                    ((DeviceSegmentHeap) runs.heap).recount();
                }
                continue;
            }
            if (runs.router.runsDeviceGetsInOneLaunch(m, counts[0] == 0 && counts[2] == 0 && counts[1] == m)) {
                BucketCache cache = runs.parts.cache();
                byte[] table = runs.parts.tableParams();
                cache.operationsRan(m, table);
                runs.pipeline.runGetsInOneLaunch(runs.stream, small, m, key, o, code, table, runs.mirrorTableParams(), cache.params(),
                        cache.lastClock());
                continue;
            }
            runs.runSlice(m, k, key, val, code, o, counts[0], counts[1] > 0, counts[0] + counts[2] > 0);
        }
        runs.afterBatch();
    }
}
