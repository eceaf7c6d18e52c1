package org.gphash;

/**
 * What the coalescer did.
 *
 * @param batches         engine batches it ran
 * @param operations      the operations they held
 * @param hostCacheHits   gets the host read cache answered (0 without one)
 * @param hostCacheMisses gets it did not
 * @param getsRunAtOnce   gets that ran at once alongside other calls instead of in a batch (see
 *                        {@link org.gphash.spi.Engine#getAlongside}): those that missed the host
 *                        cache, and those that did not ask it (no write came lately)
 */
public record CoalescerStats(long batches, long operations, long hostCacheHits, long hostCacheMisses,
                             long getsRunAtOnce) {
    /** {@return operations per batch (0 before the first)} */
    public double meanBatchSize() {
        return batches == 0 ? 0 : (double) operations / batches;
    }

    /** {@return the share of gets the host read cache answered (0 before any)} */
    public double hostCacheHitRate() {
        long n = hostCacheHits + hostCacheMisses;
        return n == 0 ? 0 : (double) hostCacheHits / n;
    }
}
