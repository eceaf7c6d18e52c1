// One-shot warp access (GPHash §3.2.1): each lane reads one candidate slot of the key, so a warp sees
// all of them in one coalesced step. Lanes follow the validity order of §3.2.2 (docs/DESIGN.md):
// level from the top, then bucket number ascending (a bucket two hashes share is read once), then
// slot; so the lowest matching lane is always the key's valid item and the others are duplicates.
//
// A window is the run of levels whose candidate slots fit in one warp (levels x hashes x slots <= 32
// in every geometry, so operations always probe in one window; a resize in progress has more levels
// and is probed window by window).
#pragma once
#include <cstdint>
#include "../cache/cache_params.cuh"
#include "candidate_order.cuh"
#include "../core/key_hash.cuh"
#include "../core/slot_meta.cuh"
#include "../core/table_params.cuh"

namespace gphash {

__device__ __forceinline__ int levels_per_window(const TableParams& t) {
    return kWarpSize / static_cast<int>(t.hashes * t.slots);
}

// What a warp saw in one window. Masks have one bit per lane; per-lane fields are this lane's.
struct WindowProbe {
    uint32_t active;     // lanes mapped to a distinct candidate slot
    uint32_t match;      // lanes whose slot holds the key
    uint32_t empty;      // lanes whose slot is EMPTY
    uint32_t best;       // (load << 5 | first lane) of the least-loaded bucket with an EMPTY slot, or ~0u
    uint32_t candidates; // lanes mapped to a distinct candidate slot, cached or not
    uint32_t cached;     // active lanes whose slot was read from a BktCache entry
    uint64_t slot;       // this lane's slot (offset in the pool)
    uint64_t meta;       // this lane's meta word as read
    uint64_t bucket;     // this lane's pool bucket (global number, cache_params.cuh)
    int entry;           // the cache entry this lane's slot was read from, or -1
    bool holds_ref;      // this lane took the reference on `entry` (one lane per bucket)
};

// Whether the key at `slot_key` in the pool equals the query key (in the pool or in a batch buffer).
template <bool QueryInPool>
__device__ __forceinline__ bool key_equals(const TableParams& t, const uint8_t* slot_key, const uint8_t* query) {
    const int ks = static_cast<int>(t.key_size);
    const int words = (ks + 7) / 8;
    for (int w = 0; w < words; ++w) {
        const uint64_t q = QueryInPool ? pool_key_word(query, w, ks) : key_word(query, w, ks);
        if (pool_key_word(slot_key, w, ks) != q) {
            return false;
        }
    }
    return true;
}

// The lanes of this lane's bucket (meaningful for active lanes).
__device__ __forceinline__ uint32_t bucket_lanes(const TableParams& t) {
    const int s = static_cast<int>(t.slots);
    const int first = (lane_id() / s) * s;
    const uint32_t ones = s >= 32 ? kFullMask : ((1u << s) - 1);
    return ones << first;
}

// Probes levels [d0, d0 + nlev) for the key (hashes k, bytes at `key`). Every lane of the warp must call.
// Only buckets above depth `place_end` count for least-loaded placement (a resize places items
// above the level it empties).
//
// With a cache, a lane whose bucket is cached reads the cached copy (device memory) instead of the
// pool, holding a reference on the entry until release_probe; with `cached_only`, lanes whose
// bucket is not cached stay inactive, so the probe reads nothing across PCIe.
template <bool QueryInPool>
__device__ WindowProbe probe_window(const TableParams& t, const KeyHashes& k, const uint8_t* key, int d0, int nlev,
                                    int place_end, const CacheParams* cache = nullptr, bool cached_only = false) {
    const uint8_t* pool = reinterpret_cast<const uint8_t*>(t.pool);
    const int lane = lane_id();
    const int hs = static_cast<int>(t.hashes * t.slots);
    WindowProbe p{};
    bool act = lane < nlev * hs;
    if (act) {
        const int d = d0 + lane / hs;
        const int r = (lane / static_cast<int>(t.slots)) % static_cast<int>(t.hashes);
        const int s = lane % static_cast<int>(t.slots);
        // The candidate order every probe shares (candidate_order.cuh, checked against Java in CI).
        uint64_t b[kMaxHashes];
        sorted_buckets(k, static_cast<int>(t.hashes), 1ull << (t.top_log2 - d), b);
        act = r == 0 || b[r] != b[r - 1];  // a bucket shared by two hashes is read once, at its first rank
        p.slot = t.level_offset[d] + b[r] * static_cast<uint64_t>(t.bucket_size) + static_cast<uint64_t>(s) * t.slot_size;
        p.bucket = global_bucket(t, d, b[r]);
    }
    p.entry = -1;
    p.candidates = __ballot_sync(kFullMask, act);
    const uint8_t* src = pool + p.slot;  // where this lane reads its slot: the pool or a cached copy
    if (cache != nullptr && cache_on(*cache)) {
        const int first = (lane / static_cast<int>(t.slots)) * static_cast<int>(t.slots);
        p.holds_ref = act && lane == first;
        int e = p.holds_ref ? acquire_entry(*cache, p.bucket) : -1;
        p.holds_ref = p.holds_ref && e >= 0;
        e = __shfl_sync(kFullMask, e, first);
        if (act && e >= 0) {
            p.entry = e;
            src = cached_slot(t, *cache, static_cast<uint32_t>(e), lane % static_cast<int>(t.slots));
        }
        act = act && (e >= 0 || !cached_only);
    }
    bool eq;
    const bool one_word_keys = t.key_stride == 8;  // slots of 16 bytes, 16-byte aligned
    const int ks = static_cast<int>(t.key_size);
    const uint64_t query0 = one_word_keys ? (QueryInPool ? pool_key_word(key, 0, ks) : key_word(key, 0, ks)) : 0;
    const uint64_t key_mask = ks >= 8 ? ~0ull : (1ull << (ks * 8)) - 1;
    for (;;) {
        if (one_word_keys) {
            const ulonglong2 mk = act ? load_meta_and_key(src, 0) : make_ulonglong2(kEmpty, 0);
            p.meta = mk.x;
            eq = act && meta_is_item(p.meta) && meta_fingerprint(p.meta) == k.fp && (mk.y & key_mask) == query0;
        } else {
            p.meta = act ? load_meta(src, 0) : kEmpty;
            eq = act && meta_is_item(p.meta) && meta_fingerprint(p.meta) == k.fp
                 && key_equals<QueryInPool>(t, src + 8, key);
        }
        // The key bytes count only if the slot still holds the item whose meta word we read; a
        // cached slot being rewritten by a mirror (kBusyMeta) is read again.
        const bool stale = (act && p.entry >= 0 && p.meta == kBusyMeta) || (eq && load_meta(src, 0) != p.meta);
        if (!__any_sync(kFullMask, stale)) {
            break;
        }
    }
    p.active = __ballot_sync(kFullMask, act);
    p.cached = __ballot_sync(kFullMask, act && p.entry >= 0);
    p.match = __ballot_sync(kFullMask, eq);
    p.empty = __ballot_sync(kFullMask, act && p.meta == kEmpty);
    const uint32_t occupied = __ballot_sync(kFullMask, act && p.meta != kEmpty);
    uint32_t score = ~0u;
    if (act && lane % t.slots == 0 && d0 + lane / hs < place_end) {
        const uint32_t lanes = bucket_lanes(t);
        if (p.empty & lanes) {
            score = (static_cast<uint32_t>(__popc(occupied & lanes)) << 5) | static_cast<uint32_t>(lane);
        }
    }
    p.best = __reduce_min_sync(kFullMask, score);
    return p;
}

// Gives back the cache references a probe took.
__device__ __forceinline__ void release_probe(const CacheParams* cache, const WindowProbe& p) {
    if (cache != nullptr && p.holds_ref) {
        release_entry(*cache, p.entry);
    }
}

// The first EMPTY slot of the least-loaded candidate bucket (ties: earlier in validity order), as a
// lane of the window, or -1 when every candidate bucket is full.
__device__ __forceinline__ int least_loaded_empty_lane(const WindowProbe& p) {
    if (p.best == ~0u) {
        return -1;
    }
    const int first = static_cast<int>(p.best & 31);
    const uint32_t after = p.empty & (first == 0 ? kFullMask : ~((1u << first) - 1));
    return __ffs(after) - 1;  // the bucket's lanes are contiguous, so its first EMPTY lane is this one
}

// Lanes among `candidates` (a subset of match) whose value offset another match shares.
__device__ __forceinline__ uint32_t lanes_sharing_value(const WindowProbe& p, uint32_t candidates) {
    const bool m = (p.match >> lane_id()) & 1;
    // The word's low 48 bits name the block in both formats (format 3: class and offset), so equal bits
    // are a shared block; they are below 2^48, so a non-matching lane's marker never equals them.
    const uint64_t v = m ? meta_value_offset(p.meta) : (0xFFFF000000000000ull | static_cast<uint64_t>(lane_id()));
    const uint32_t peers = __match_any_sync(kFullMask, v);
    return __ballot_sync(kFullMask, m && __popc(peers) > 1) & candidates;
}

}  // namespace gphash
