/**
 * BktCache on the GPU (GPHash §3.3): the cache's device memory and its loads on a stream of their own
 * ({@link org.gphash.cuda.cache.BucketCache}; kernels in cache_*.cuh, the selection in
 * cache/cache_select.cuh). Its host-side policy and the reference selection are the bktcache module's.
 * Public for the engine's other packages, not API.
 */
package org.gphash.cuda.cache;
