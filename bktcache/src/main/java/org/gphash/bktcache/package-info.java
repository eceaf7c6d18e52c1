/**
 * Host-side logic of BktCache, the frozen cache of hot buckets in GPU memory (GPHash &sect;3.3).
 *
 * <p>Operations record per-bucket scores ({@link org.gphash.bktcache.CachePolicy}); a loading phase,
 * due by {@link org.gphash.bktcache.ReloadSchedule}, selects the hottest
 * {@link org.gphash.bktcache.BktCacheConfig#capacityFor(long) share} of the buckets and copies them into
 * GPU memory, where membership stays frozen until the next load. The selection is a radix select,
 * run on the GPU (cache_select.cuh); {@link org.gphash.bktcache.TopBuckets} and
 * {@link org.gphash.bktcache.ThresholdSearch} are the same selection in plain Java, the reference the
 * kernels' is checked against in CI (CacheSelectAgreementTest) and the selection of the hit-rate
 * simulator. What freezing costs in hit rate against a dynamic cache is measured by the
 * simulator in bench-ycsb ({@code org.gphash.bench.cache.FrozenCacheSimulator}).
 *
 * <p>Nothing here depends on anything: not JCuda, not other gphash modules, not Caffeine. The kernels
 * and the fetch stream live in the cuda module.
 */
package org.gphash.bktcache;
