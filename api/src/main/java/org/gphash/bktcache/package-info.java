/**
 * BktCache's public face: its configuration ({@link org.gphash.bktcache.BktCacheConfig}), policies
 * ({@link org.gphash.bktcache.CachePolicy}) and figures ({@link org.gphash.bktcache.BktCacheStats}).
 * BktCache is the frozen cache of hot buckets in GPU memory (GPHash &sect;3.3): operations record
 * per-bucket scores, and a loading phase selects the hottest
 * {@link org.gphash.bktcache.BktCacheConfig#capacityFor(long) share} of the buckets and copies them
 * into GPU memory, where membership stays frozen until the next load.
 *
 * <p>These types are in the API module so that an application configures the cache with nothing
 * but {@code org.gphash}. When a load is due, which buckets it selects and the selection's plain
 * Java reference are implementation, in module {@code org.gphash.bktcache} (package
 * {@code org.gphash.bktcache.loading}); the kernels and the fetch stream live in the cuda module.
 */
package org.gphash.bktcache;
