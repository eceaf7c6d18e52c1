// Probing the HBM mirror with one sub-group of lanes per key: as many lanes as a bucket has slots
// (lane i reads slot i's tag, and the slot itself where the tag matches), a few keys per warp. Each
// sub-group issues the tag loads of all its key's candidate buckets before using any, so a warp keeps
// several keys' loads in flight; warp_probe.cuh's one-shot probe (one key per warp, lane = candidate
// slot) keeps one. Used where the mirror is read without writers racing (a batch's lookups) and for
// claiming insert slots (CAS in the mirror).
//
// Candidate order is the validity order of docs/DESIGN.md: level from the top, bucket number
// ascending (a bucket two hashes share once), slot ascending; the first match is the valid item.
#pragma once
#include <cstdint>
#include "../cache_params.cuh"
#include "../candidate_order.cuh"
#include "../key_hash.cuh"
#include "../slot_meta.cuh"
#include "../table_params.cuh"
#include "mirror_tags.cuh"

namespace gphash {

constexpr int kMaxSubwarpBuckets = 8;  // levels x hashes when a bucket has at least 4 slots

// Whether this geometry probes by sub-groups: slots a power of two, at least 4 (so a key's buckets fit
// the registers kept per lane), at most a warp.
__device__ __forceinline__ bool subwarp_probe_fits(const TableParams& t) {
    const int s = static_cast<int>(t.slots);
    return s >= 4 && s <= kWarpSize && (s & (s - 1)) == 0 && t.level_count * t.hashes <= kMaxSubwarpBuckets;
}

struct SubGroup {
    int width;      // lanes per key: slots per bucket
    int per_warp;   // keys per warp
    int sub;        // this lane's key within the warp
    int index;      // this lane's slot
    int leader;     // the sub-group's first lane
    uint32_t mask;  // the sub-group's lanes
};

__device__ __forceinline__ SubGroup sub_group(const TableParams& t) {
    const int width = static_cast<int>(t.slots);
    const int lane = static_cast<int>(threadIdx.x) & (kWarpSize - 1);
    const int sub = lane / width;
    const uint32_t ones = width >= kWarpSize ? kFullMask : ((1u << width) - 1);
    return SubGroup{width, kWarpSize / width, sub, lane % width, sub * width, ones << (sub * width)};
}

// What a sub-group learned about its key; the same in every lane of the sub-group.
struct MirrorLookup {
    bool found;          // the key's valid item
    uint64_t meta;
    uint64_t bucket;     // its global bucket number (cache_params.cuh)
    int slot;            // its slot in the bucket
    bool placeable;      // some candidate bucket has an EMPTY slot
    uint64_t place_bucket;
    int place_slot;      // the first EMPTY slot of the least-loaded such bucket (ties: earlier candidate)
    uint32_t candidates; // bit c set: candidate c is a distinct bucket of the key
    uint64_t candidate[kMaxSubwarpBuckets];  // global bucket numbers, candidate c = level c / hashes
};

// Looks `key` (hashes k) up in the mirror (mt: TableParams over the mirror) by its tags
// (mirror_tags.cuh): each lane reads its slot's tag in every candidate bucket, and reads the slot
// itself only where the tag is the key's fingerprint, until the key is found. Every lane of the warp
// must call; `live` false for sub-groups without a key this round. During placement other warps claim
// slots meanwhile, so an EMPTY slot seen may be taken by the time it is CASed (the caller retries).
// Candidate c is level c / hashes's (c % hashes)-th smallest bucket, skipped when it repeats the one
// before (a bucket two hashes share); arrays are indexed by c only, so they stay in registers.
__device__ MirrorLookup lookup_mirror(const TableParams& mt, const SubGroup& g, const KeyHashes& k, const uint8_t* key,
                                      bool live) {
    MirrorLookup r{};
    const int ks = static_cast<int>(mt.key_size);
    const int hashes = static_cast<int>(mt.hashes);
    const int count = static_cast<int>(mt.level_count) * hashes;
    const bool one_word = mt.key_stride == 8;
    const uint64_t query0 = live && one_word ? key_word(key, 0, ks) : 0;
    const uint64_t key_mask = ks >= 8 ? ~0ull : (1ull << (ks * 8)) - 1;
    uint32_t tag[kMaxSubwarpBuckets];
    // Every tag load issued before any is used.
#pragma unroll
    for (int c = 0; c < kMaxSubwarpBuckets; ++c) {
        tag[c] = kTagInsert;  // neither EMPTY nor a fingerprint; masked by `candidates` anyway
        if (c < count) {
            const int d = c / hashes;
            const int q = c % hashes;
            const uint64_t size = 1ull << (mt.top_log2 - d);
            const uint64_t b = nth_bucket(k, hashes, size, q);
            if (q == 0 || nth_bucket(k, hashes, size, q - 1) != b) {
                r.candidates |= 1u << c;
                r.candidate[c] = global_bucket(mt, d, b);
                if (live) {
                    tag[c] = load_tag(mt, r.candidate[c], g.index);
                }
            }
        }
    }
    // The first match in candidate order; the least-loaded bucket with an EMPTY slot.
    uint32_t best = ~0u;  // occupied << 8 | candidate
    bool found = false;
#pragma unroll
    for (int c = 0; c < kMaxSubwarpBuckets; ++c) {
        const bool here = live && ((r.candidates >> c) & 1);
        uint64_t meta = kEmpty;
        bool eq = false;
        if (here && !found && tag[c] == k.fp) {  // the slot itself, its key and its word as of now
            const uint8_t* at = mirror_slot_of(mt, r.candidate[c], g.index);
            if (one_word) {
                ulonglong2 mk;
                asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(mk.x), "=l"(mk.y) : "l"(at));
                meta = mk.x;
                eq = (mk.y & key_mask) == query0;
            } else {
                meta = load_meta(at, 0);
                eq = true;
                for (int w = 0; w < mt.key_stride / 8 && eq; ++w) {
                    eq = pool_key_word(at + 8, w, ks) == key_word(key, w, ks);
                }
            }
            eq = eq && meta_is_item(meta) && meta_fingerprint(meta) == k.fp;
        }
        const uint32_t match = __ballot_sync(kFullMask, eq) & g.mask;
        const uint32_t empty = __ballot_sync(kFullMask, here && tag[c] == kTagEmpty) & g.mask;
        const uint32_t occupied = __ballot_sync(kFullMask, here && tag[c] != kTagEmpty) & g.mask;
        // One shuffle that every lane executes: from the sub-group's first matching lane, if any.
        const int first = match != 0 ? __ffs(match) - 1 : g.leader;
        const uint64_t first_meta = __shfl_sync(kFullMask, meta, first);
        if (!found && match != 0) {
            found = true;
            r.slot = first - g.leader;
            r.bucket = r.candidate[c];
            r.meta = first_meta;
        }
        if (empty != 0) {
            const uint32_t score = (static_cast<uint32_t>(__popc(occupied)) << 8) | static_cast<uint32_t>(c);
            if (score < best) {
                best = score;
                r.place_bucket = r.candidate[c];
                r.place_slot = __ffs(empty) - 1 - g.leader;
            }
        }
    }
    r.found = found;
    r.placeable = best != ~0u;
    return r;
}

}  // namespace gphash
