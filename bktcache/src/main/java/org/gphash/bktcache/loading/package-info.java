/**
 * How BktCache loads (GPHash &sect;3.3): when a loading phase is due
 * ({@link org.gphash.bktcache.loading.ReloadSchedule}) and which buckets it selects. The selection is
 * a radix select run on the GPU (cache_select.cuh); {@link org.gphash.bktcache.loading.TopBuckets} and
 * {@link org.gphash.bktcache.loading.ThresholdSearch} are the same selection in plain Java, the
 * reference the kernels' is checked against in CI (CacheSelectAgreementTest) and the selection of the
 * hit-rate simulator in bench-ycsb ({@code org.gphash.bench.cache.FrozenCacheSimulator}).
 *
 * <p>Nothing here depends on more than the API's BktCache configuration: not JCuda, not Caffeine.
 */
package org.gphash.bktcache.loading;
