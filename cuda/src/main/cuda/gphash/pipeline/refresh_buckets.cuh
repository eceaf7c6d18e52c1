// The GPU's copies of pool buckets brought up to date after host threads wrote the pool between the
// engine's batches (org.gphash.cuda.HostWrites): each listed bucket is copied again from the pool
// into the HBM mirror (its slots, then their tags) and, where BktCache holds it, into its entry (slots
// and values). Runs under the engine's lock before its next GPU work, so nothing else reads or writes
// these copies meanwhile; a bucket listed twice is copied twice, to the same effect.
#pragma once
#include <cstdint>
#include "../cache/cache_load.cuh"
#include "../cache/cache_params.cuh"
#include "../core/table_params.cuh"
#include "../core/warp.cuh"
#include "../core/warp_copy.cuh"
#include "index_mirror.cuh"
#include "mirror_tags.cuh"

namespace gphash {

// A log entry naming no bucket (org.gphash.cuda.HostOperations' SKIP, -1).
constexpr uint64_t kSkipBucket = ~0ull;

// One warp per listed bucket. t: the pool's TableParams; mt: the mirror's (unused without a mirror).
__device__ void refresh_buckets(const TableParams& t, const TableParams& mt, bool mirror, const CacheParams& c,
                                const uint64_t* buckets, uint64_t n) {
    const uint64_t warps = static_cast<uint64_t>(gridDim.x) * blockDim.x / kWarpSize;
    const uint8_t* pool = reinterpret_cast<const uint8_t*>(t.pool);
    for (uint64_t i = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarpSize; i < n; i += warps) {
        const uint64_t x = buckets[i];
        if (x == kSkipBucket) {
            continue;  // an entry a write reserved and did not need (the whole warp skips it)
        }
        if (mirror) {
            for (int s = 0; s < t.slots; ++s) {
                uint8_t* copy = mirror_slot_of(mt, x, s);
                warp_copy(copy, pool + pool_slot_of(t, x, s), static_cast<uint64_t>(t.slot_size));
                if (lane_id() == 0) {
                    __threadfence();
                    store_tag(mt, x, s, tag_of(load_meta(copy, 0)));
                }
                __syncwarp();
            }
        }
        if (cache_on(c)) {
            uint32_t f = lane_id() == 0 ? load_map(cache_map_f(c) + x) : 0;
            f = __shfl_sync(kFullMask, f, 0);
            if (f != kNotCached && published(f)) {
                int d;
                uint64_t b;
                locate_bucket(t, x, d, b);
                copy_bucket(t, c, d, b, f);
            }
        }
    }
}

}  // namespace gphash
