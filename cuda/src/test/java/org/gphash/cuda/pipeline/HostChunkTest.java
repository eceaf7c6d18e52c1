package org.gphash.cuda.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * How a host batch is cut into chunks ({@link MirrorPath#hostChunk}, CI: no GPU needed): whole up to
 * 2^16 operations, then two chunks, none under 2^16 nor over a slice; a shard's part is cut as its
 * whole batch would be; a slice holds at most a GiB of places of the value size.
 */
class HostChunkTest {

    @Test
    void batchesAreCutInTwoBetweenTwoToTheSixteenAndASlice() {
        assertEquals(1, HostBatches.hostChunk(0), "an empty batch still has a chunk size");
        assertEquals(1, HostBatches.hostChunk(1));
        assertEquals(65_536, HostBatches.hostChunk(65_536), "whole up to 2^16");
        assertEquals(65_536, HostBatches.hostChunk(65_537), "no chunk under 2^16");
        assertEquals(75_000, HostBatches.hostChunk(150_000));
        assertEquals(100_001, HostBatches.hostChunk(200_001), "two chunks, the first the larger");
        assertEquals(1 << 17, HostBatches.hostChunk(1 << 18));
        assertEquals(1 << 19, HostBatches.hostChunk(1 << 20));
        assertEquals(MirrorRuns.MAX_SLICE, HostBatches.hostChunk(1 << 21));
        assertEquals(MirrorRuns.MAX_SLICE, HostBatches.hostChunk(3 << 20), "no chunk over a slice");
    }

    @Test
    void aPartIsCutAsItsWholeBatchWouldBe() {
        assertEquals(1 << 17, HostBatches.partChunk(1 << 18, 200_000), "the whole batch's chunk");
        assertEquals(100_000, HostBatches.partChunk(1 << 18, 100_000), "never more than the part");
        assertEquals(1, HostBatches.partChunk(10, 0));
    }

    @Test
    void slicesOfLargeValuesHoldAtMostFourGibibytesOfPlaces() {
        assertEquals(MirrorRuns.MAX_SLICE, MirrorRuns.maxSlice(128));
        assertEquals(MirrorRuns.MAX_SLICE, MirrorRuns.maxSlice(1024), "values up to 1 KiB: slices of 2^20");
        assertEquals(MirrorRuns.MAX_SLICE, MirrorRuns.maxSlice(4096), "values up to 4 KiB: slices of 2^20");
        assertEquals(1 << 19, MirrorRuns.maxSlice(8192));
        assertEquals(4096, MirrorRuns.maxSlice(1 << 20), "4,096 values of 1 MiB");
        assertEquals(1000, HostBatches.hostChunk(1000, 1024), "whole up to the slice");
        assertEquals(1024, HostBatches.hostChunk(5000, 1024), "never over the slice");
        assertEquals(1 << 17, HostBatches.hostChunk(1 << 18, 1 << 18), "as before where a slice holds 2^16");
        assertEquals(512, HostBatches.partChunk(5000, 512, 1024));
    }
}
