package org.gphash.cuda.pipeline;



import org.gphash.cuda.cache.BucketCache;

/**
 * Device-resident batches on the mirror: columns already in GPU memory, run in slices of
 * {@link MirrorRuns#MAX_SLICE}; a slice of gets only may run in one launch on the small reads' kernel
 * when the router says so.
 */
final class DeviceBatches {

    private final MirrorRuns runs;
    private final SmallReads small;

    DeviceBatches(MirrorRuns runs, SmallReads small) {
        this.runs = runs;
        this.small = small;
    }

    void executeOnDevice(long n, long kindsAt, long keysAt, long valuesAt, long codesAt, long outAt) {
        int ks = runs.geometry.keySize();
        int vs = runs.geometry.valueSize();
        for (long first = 0; first < n; first += MirrorRuns.MAX_SLICE) {
            long m = Math.min(MirrorRuns.MAX_SLICE, n - first);
            long k = kindsAt + first;
            long key = keysAt + first * ks;
            long val = valuesAt == 0 ? 0 : valuesAt + first * vs;
            long code = codesAt + first;
            long o = outAt == 0 ? 0 : outAt + first * vs;
            long[] counts = runs.pipeline.countKinds(runs.stream, new BatchPipeline.DeviceOps(m, k, key, val, code, o, 0, 0, 0));
            if (counts[0] > 0 && val == 0) {
                throw new IllegalArgumentException("a device batch with writes needs its values buffer");
            }
            if (counts[1] > 0 && o == 0) {
                throw new IllegalArgumentException("a device batch with reads needs its out buffer");
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
