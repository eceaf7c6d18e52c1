package org.gphash.cuda.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.gphash.cuda.runtime.KernelParams;
import org.junit.jupiter.api.Test;

/**
 * How a run's pool accesses are binned by address (no GPU needed): one bin for the smallest runs,
 * 2^10 for capacity classes up to 2^14, 2^16 above; the shift puts every offset of the pool in a bin
 * below the count, and no smaller shift would.
 */
class AddressBinsTest {

    @Test
    void runsGetOneFewOrAllBinsBySize() {
        assertEquals(1, BatchPipeline.addressBins(1024, 1024, 1024));
        assertEquals(BatchPipeline.FEW_BINS, BatchPipeline.addressBins(1025, 2048, 1024));
        assertEquals(BatchPipeline.FEW_BINS, BatchPipeline.addressBins(16384, BatchPipeline.FEW_BINS_MAX, 1024));
        assertEquals(KernelParams.ADDRESS_BINS, BatchPipeline.addressBins(16385, 32768, 1024));
        assertEquals(KernelParams.ADDRESS_BINS, BatchPipeline.addressBins(20000, 32768, 0));
        assertEquals(BatchPipeline.FEW_BINS, BatchPipeline.addressBins(1, 1024, 0), "oneBinMax 0: never one bin");
    }

    @Test
    void theShiftFitsThePoolIntoTheBinsTightly() {
        for (long length : new long[] {1, 4096, 1L << 20, (1L << 20) + 1, 2_902_693_632L, 1L << 40}) {
            for (int bins : new int[] {2, BatchPipeline.FEW_BINS, KernelParams.ADDRESS_BINS}) {
                int shift = PipelineBuffers.addressShift(length, bins);
                assertTrue((length - 1) >> shift < bins, length + " bytes, " + bins + " bins: shift " + shift);
                if (shift > 0) {
                    assertTrue((length - 1) >> (shift - 1) >= bins, length + " bytes, " + bins + " bins: shift " + shift
                            + " is larger than it needs");
                }
            }
        }
        assertThrows(IllegalArgumentException.class, () -> PipelineBuffers.addressShift(1 << 20, 1000));
        assertThrows(IllegalArgumentException.class, () -> PipelineBuffers.addressShift(1 << 20, 1 << 17));
    }
}
