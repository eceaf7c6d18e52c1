package org.gphash.bktcache;

/**
 * How a loading phase ranks buckets. Every policy reduces a bucket to a 32-bit unsigned score; the
 * load admits the buckets with the highest scores, and a score of 0 means "never cached".
 */
public enum CachePolicy {

    /**
     * Least frequently used: the score is the bucket's access counter. Accesses are sampled (see
     * {@link BktCacheConfig#counterSampleShift()}), and every load halves all counters, so a set that
     * was hot long ago fades out instead of holding its place forever.
     */
    LFU,

    /**
     * Least recently used: the score is the stamp of the last period (the interval between two loads)
     * in which the bucket was accessed. Buckets accessed in the same period tie.
     */
    LRU,

    /**
     * Random: the score is a hash of the bucket id and the load's sequence number, never 0. Nothing is
     * recorded on access; this is the baseline that shows what the access statistics buy.
     */
    RANDOM
}
