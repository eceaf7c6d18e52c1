// Keeping BktCache true to the pool: every operation that changes a pool slot writes the pool first
// and then mirrors the slot into the cache (if its bucket is cached), so the cache never holds what
// the pool does not. A load copying the bucket meanwhile is told to copy again (kDirty).
#pragma once
#include <cstdint>
#include "cache_params.cuh"
#include "../core/slot_meta.cuh"
#include "../core/slot_meta_format.cuh"
#include "../core/table_params.cuh"
#include "../core/warp_copy.cuh"

namespace gphash {

// Lane 0's view of F(x) after the caller's pool write: the entry to mirror into (with a reference
// taken), or -1. A load in progress on x is marked dirty instead.
__device__ __forceinline__ int entry_to_mirror(const CacheParams& c, uint64_t x) {
    __threadfence();  // the pool write is visible before F(x) is read (a load stores F, then reads the pool)
    uint32_t* word = cache_map_f(c) + x;
    uint32_t f = load_map(word);
    while (f != kNotCached && !published(f)) {
        if (f & kDirty) {
            return -1;
        }
        const uint32_t seen = atomicCAS(word, f, f | kDirty);
        if (seen == f) {
            return -1;
        }
        f = seen;  // published meanwhile, unpublished, or marked by another writer
    }
    return f == kNotCached ? -1 : acquire_entry(c, x);
}

// The entry caching bucket x, for the whole warp (with a reference lane 0 holds), or -1.
__device__ __forceinline__ int warp_entry_to_mirror(const CacheParams& c, uint64_t x) {
    const int lane = lane_id();
    const int y = lane == 0 ? entry_to_mirror(c, x) : -1;
    return __shfl_sync(kFullMask, y, 0);
}

// Lane 0 takes a cached slot for rewriting: its meta word becomes kBusyMeta (mirrors take turns).
__device__ __forceinline__ void take_cached_slot(uint8_t* copy) {
    auto* word = reinterpret_cast<unsigned long long*>(copy);
    for (;;) {
        const unsigned long long m = *reinterpret_cast<volatile unsigned long long*>(word);
        if (m != kBusyMeta && atomicCAS(word, m, kBusyMeta) == m) {
            break;
        }
    }
    __threadfence();  // the slot reads busy before any of its bytes change
}

// Lane 0 gives a rewritten cached slot back: its meta word, then the entry's reference.
__device__ __forceinline__ void release_cached_slot(const CacheParams& c, int y, uint8_t* copy, uint64_t meta) {
    store_meta(copy, 0, meta);
    release_entry(c, y);
}

// For the whole warp: the cached copy of slot s of pool bucket x, taken by lane 0 for rewriting, or
// an entry of -1 when x is not cached (or a load is copying it: the load is told to copy again).
struct CachedSlot {
    int entry;
    uint8_t* copy;
};

__device__ __forceinline__ CachedSlot take_slot_to_mirror(const TableParams& t, const CacheParams* cache, uint64_t x,
                                                          int s) {
    if (cache == nullptr || !cache_on(*cache)) {
        return CachedSlot{-1, nullptr};
    }
    const int y = warp_entry_to_mirror(*cache, x);
    if (y < 0) {
        return CachedSlot{-1, nullptr};
    }
    uint8_t* copy = cached_slot(t, *cache, static_cast<uint32_t>(y), s);
    if (lane_id() == 0) {
        take_cached_slot(copy);
    }
    __syncwarp();
    return CachedSlot{y, copy};
}

// Copies pool slot `pool_slot` (slot s of pool bucket x) into its cached copy, if x is cached.
// Whole warp. Mirrors of one cached slot take turns through its meta word (kBusyMeta), and each
// reads the pool only once it holds the slot, so the last one leaves the pool's latest state.
// Readers of the cached slot (op_search.cuh) check the meta word before and after reading the value.
__device__ void mirror_slot(const TableParams& t, const CacheParams* cache, uint64_t x, int s, uint64_t pool_slot) {
    const CachedSlot cs = take_slot_to_mirror(t, cache, x, s);
    if (cs.entry < 0) {
        return;
    }
    const int lane = lane_id();
    const int y = cs.entry;
    uint8_t* copy = cs.copy;
    const uint8_t* pool = reinterpret_cast<const uint8_t*>(t.pool);
    uint64_t meta = 0;
    if (lane == 0) {
        meta = load_meta(pool, pool_slot);  // read only once the slot is held: the last mirror sees the latest
    }
    meta = __shfl_sync(kFullMask, meta, 0);
    for (;;) {
        warp_copy(copy + 8, pool + pool_slot + 8, static_cast<uint64_t>(t.key_stride));
        if (meta_is_item(meta)) {
            warp_copy_padded(copy + cached_value_offset(t), pool + meta_value_at(t, meta),
                             meta_value_length(t, pool, meta), static_cast<uint64_t>(t.value_size));
        }
        __threadfence();
        // The key copied is the item's only if the slot did not move on meanwhile (a block is never
        // reused within a batch, so an unchanged meta word means an unchanged item).
        uint64_t now = lane == 0 ? load_meta(pool, pool_slot) : 0;
        now = __shfl_sync(kFullMask, now, 0);
        if (now == meta) {
            break;
        }
        meta = now;
    }
    if (lane == 0) {
        release_cached_slot(*cache, y, copy, meta);
    }
    __syncwarp();
}

// The same for a writer that knows what the slot now holds (the v2 pipeline: the meta word it has
// just published, the key in the HBM mirror, the value in GPU memory), so nothing crosses PCIe.
// Whole warp. One writer per slot per batch; readers check the meta word before and after.
__device__ void mirror_slot_known(const TableParams& t, const CacheParams* cache, uint64_t x, int s, uint64_t meta,
                                  const uint8_t* key, const uint8_t* value) {
    const CachedSlot cs = take_slot_to_mirror(t, cache, x, s);
    if (cs.entry < 0) {
        return;
    }
    const int lane = lane_id();
    const int y = cs.entry;
    uint8_t* copy = cs.copy;
    warp_copy(copy + 8, key, static_cast<uint64_t>(t.key_stride));
    if (value != nullptr && meta_is_item(meta)) {
        warp_copy(copy + cached_value_offset(t), value, static_cast<uint64_t>(t.value_size));
    }
    __threadfence();
    if (lane == 0) {
        release_cached_slot(*cache, y, copy, meta);
    }
    __syncwarp();
}

}  // namespace gphash
