package org.gphash.cuda.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * How a host batch is cut into chunks ({@link MirrorPath#hostChunk}, CI: no GPU needed): whole up to
 * 2^16 operations, then two chunks, none under 2^16 nor over a slice; a shard's part is cut as its
 * whole batch would be.
 */
class HostChunkTest {

    @Test
    void batchesAreCutInTwoBetweenTwoToTheSixteenAndASlice() {
        assertEquals(1, MirrorPath.hostChunk(0), "an empty batch still has a chunk size");
        assertEquals(1, MirrorPath.hostChunk(1));
        assertEquals(65_536, MirrorPath.hostChunk(65_536), "whole up to 2^16");
        assertEquals(65_536, MirrorPath.hostChunk(65_537), "no chunk under 2^16");
        assertEquals(75_000, MirrorPath.hostChunk(150_000));
        assertEquals(100_001, MirrorPath.hostChunk(200_001), "two chunks, the first the larger");
        assertEquals(1 << 17, MirrorPath.hostChunk(1 << 18));
        assertEquals(1 << 19, MirrorPath.hostChunk(1 << 20));
        assertEquals(MirrorPath.MAX_SLICE, MirrorPath.hostChunk(1 << 21));
        assertEquals(MirrorPath.MAX_SLICE, MirrorPath.hostChunk(3 << 20), "no chunk over a slice");
    }

    @Test
    void aPartIsCutAsItsWholeBatchWouldBe() {
        assertEquals(1 << 17, MirrorPath.partChunk(1 << 18, 200_000), "the whole batch's chunk");
        assertEquals(100_000, MirrorPath.partChunk(1 << 18, 100_000), "never more than the part");
        assertEquals(1, MirrorPath.partChunk(10, 0));
    }
}
