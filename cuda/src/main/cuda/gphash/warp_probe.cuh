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
#include "key_hash.cuh"
#include "slot_meta.cuh"
#include "table_params.cuh"

namespace gphash {

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) & (kWarpSize - 1); }

__device__ __forceinline__ int levels_per_window(const TableParams& t) {
    return kWarpSize / static_cast<int>(t.hashes * t.slots);
}

// What a warp saw in one window. Masks have one bit per lane; per-lane fields are this lane's.
struct WindowProbe {
    uint32_t active;     // lanes mapped to a distinct candidate slot
    uint32_t match;      // lanes whose slot holds the key
    uint32_t empty;      // lanes whose slot is EMPTY
    uint32_t best;       // (load << 5 | first lane) of the least-loaded bucket with an EMPTY slot, or ~0u
    uint64_t slot;       // this lane's slot (offset in the pool)
    uint64_t meta;       // this lane's meta word as read
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
template <bool QueryInPool>
__device__ WindowProbe probe_window(const TableParams& t, const KeyHashes& k, const uint8_t* key, int d0, int nlev,
                                    int place_end) {
    const uint8_t* pool = reinterpret_cast<const uint8_t*>(t.pool);
    const int lane = lane_id();
    const int hs = static_cast<int>(t.hashes * t.slots);
    WindowProbe p{};
    bool act = lane < nlev * hs;
    if (act) {
        const int d = d0 + lane / hs;
        const int r = (lane / static_cast<int>(t.slots)) % static_cast<int>(t.hashes);
        const int s = lane % static_cast<int>(t.slots);
        const uint64_t mask = (1ull << (t.top_log2 - d)) - 1;
        uint64_t b[kMaxHashes];
        for (int j = 0; j < t.hashes; ++j) {  // insertion sort: at most 4 buckets
            uint64_t v = k.h[j] & mask;
            int pos = j;
            while (pos > 0 && b[pos - 1] > v) {
                b[pos] = b[pos - 1];
                --pos;
            }
            b[pos] = v;
        }
        act = r == 0 || b[r] != b[r - 1];  // a bucket shared by two hashes is read once, at its first rank
        p.slot = t.level_offset[d] + b[r] * static_cast<uint64_t>(t.bucket_size) + static_cast<uint64_t>(s) * t.slot_size;
    }
    bool eq;
    const bool one_word_keys = t.key_stride == 8;  // slots of 16 bytes, 16-byte aligned
    const int ks = static_cast<int>(t.key_size);
    const uint64_t query0 = one_word_keys ? (QueryInPool ? pool_key_word(key, 0, ks) : key_word(key, 0, ks)) : 0;
    const uint64_t key_mask = ks >= 8 ? ~0ull : (1ull << (ks * 8)) - 1;
    for (;;) {
        if (one_word_keys) {
            const ulonglong2 mk = act ? load_meta_and_key(pool, p.slot) : make_ulonglong2(kEmpty, 0);
            p.meta = mk.x;
            eq = act && meta_is_item(p.meta) && meta_fingerprint(p.meta) == k.fp && (mk.y & key_mask) == query0;
        } else {
            p.meta = act ? load_meta(pool, p.slot) : kEmpty;
            eq = act && meta_is_item(p.meta) && meta_fingerprint(p.meta) == k.fp
                 && key_equals<QueryInPool>(t, pool + p.slot + 8, key);
        }
        // The key bytes count only if the slot still holds the item whose meta word we read.
        const bool stale = eq && load_meta(pool, p.slot) != p.meta;
        if (!__any_sync(kFullMask, stale)) {
            break;
        }
    }
    p.active = __ballot_sync(kFullMask, act);
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
    // Offsets are below 2^48, so a non-matching lane's marker never equals one.
    const uint64_t v = m ? meta_value_offset(p.meta) : (0xFFFF000000000000ull | static_cast<uint64_t>(lane_id()));
    const uint32_t peers = __match_any_sync(kFullMask, v);
    return __ballot_sync(kFullMask, m && __popc(peers) > 1) & candidates;
}

}  // namespace gphash
