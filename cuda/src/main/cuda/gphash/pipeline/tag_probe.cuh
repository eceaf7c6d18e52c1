// Probing the HBM mirror by its tags (mirror_tags.cuh), one thread per key: the thread loads the tag
// row of every candidate bucket (16 bytes for 8 slots: one vector load, one sector) before using any,
// then reads a slot only where its tag is the key's fingerprint. A warp so keeps 32 keys' rows in
// flight: the probe is bound by how many loads are in flight, not by bytes (a row is a sector either
// way). Used where the mirror is read without writers racing (a batch's lookups) and for claiming
// insert slots (CAS in the mirror). Geometries whose rows do not fit one vector (fewer than 4 or more
// than 8 slots, or more than 8 candidate buckets) probe slot by slot, a warp per key (warp_probe.cuh).
//
// Candidate order is the validity order of docs/DESIGN.md: level from the top, bucket number
// ascending (a bucket two hashes share once), slot ascending; the first match is the valid item.
#pragma once
#include <cstdint>
#include "../cache/cache_params.cuh"
#include "../probe/candidate_order.cuh"
#include "../core/key_hash.cuh"
#include "../core/slot_meta.cuh"
#include "../core/table_params.cuh"
#include "mirror_tags.cuh"

namespace gphash {

constexpr int kMaxProbeBuckets = 8;  // candidate buckets (levels x hashes) a thread probe holds

// Whether this geometry probes by tag rows: 4 or 8 slots a bucket, at most kMaxProbeBuckets candidates.
__device__ __forceinline__ bool tag_probe_fits(const TableParams& t) {
    return (t.slots == 4 || t.slots == 8) && t.level_count * t.hashes <= kMaxProbeBuckets;
}

// One bucket's tags, two to a word (slot 2j in the low half of word j); words past the row are 0 and
// masked off by tag_mask.
struct TagRow {
    uint32_t w[4];
};

// The tag row of global bucket x, read past L1 as mirror words are.
__device__ __forceinline__ TagRow load_tag_row(const TableParams& mt, uint64_t x) {
    TagRow r{};
    const uint16_t* at = tag_at(mt, x, 0);
    if (mt.slots == 8) {
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3]) : "l"(at));
    } else {
        asm volatile("ld.volatile.global.v2.u32 {%0, %1}, [%2];" : "=r"(r.w[0]), "=r"(r.w[1]) : "l"(at));
    }
    return r;
}

// Bit s set where slot s's tag is `tag`.
__device__ __forceinline__ uint32_t tag_mask(const TagRow& r, uint32_t tag, int slots) {
    const uint32_t pattern = tag * 0x10001u;
    uint32_t m = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const uint32_t eq = __vcmpeq2(r.w[j], pattern);  // 0xffff in each equal half
        m |= ((eq & 1u) | ((eq >> 15) & 2u)) << (2 * j);
    }
    return m & ((1u << slots) - 1);
}

// What a thread learned about its key.
struct KeyLookup {
    bool found;          // the key's valid item
    uint64_t meta;
    uint64_t bucket;     // its global bucket number (candidate_order.cuh)
    int slot;            // its slot in the bucket
    bool placeable;      // some candidate bucket has an EMPTY slot
    uint64_t place_bucket;
    int place_slot;      // the first EMPTY slot of the least-loaded such bucket (ties: earlier candidate)
    uint32_t candidates; // bit c set: candidate c is a distinct bucket of the key
    uint64_t candidate[kMaxProbeBuckets];  // global bucket numbers, candidate c = level c / hashes
};

// Whether slot s of global bucket x (at level d) in the mirror holds `key` as a published item with
// fingerprint fp; its meta word into `meta`.
__device__ __forceinline__ bool mirror_slot_holds(const TableParams& mt, int d, uint64_t x, int s, uint32_t fp,
                                                  const uint8_t* key, uint64_t& meta) {
    const uint64_t b = x - global_bucket(mt, d, 0);
    const uint8_t* at = reinterpret_cast<const uint8_t*>(mt.level_offset[d] + b * static_cast<uint64_t>(mt.bucket_size)
                                                         + static_cast<uint64_t>(s) * mt.slot_size);
    const int ks = static_cast<int>(mt.key_size);
    bool eq = true;
    if (mt.key_stride == 8) {  // meta word and key in one 16-byte load
        ulonglong2 mk;
        asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(mk.x), "=l"(mk.y) : "l"(at));
        meta = mk.x;
        const uint64_t key_mask = ks >= 8 ? ~0ull : (1ull << (ks * 8)) - 1;
        eq = (mk.y & key_mask) == key_word(key, 0, ks);
    } else {
        meta = load_meta(at, 0);
        for (int w = 0; w < mt.key_stride / 8 && eq; ++w) {
            eq = pool_key_word(at + 8, w, ks) == key_word(key, w, ks);
        }
    }
    return eq && meta_is_item(meta) && meta_fingerprint(meta) == fp;
}

// Looks `key` (hashes k) up in the mirror (mt: TableParams over the mirror), one thread alone.
// During placement other threads claim slots meanwhile, so an EMPTY slot seen may be taken by the
// time it is CASed (the caller retries). Arrays are indexed by c only, so they stay in registers.
__device__ KeyLookup lookup_key(const TableParams& mt, const KeyHashes& k, const uint8_t* key) {
    KeyLookup r{};
    const int hashes = static_cast<int>(mt.hashes);
    const int count = static_cast<int>(mt.level_count) * hashes;
    const int slots = static_cast<int>(mt.slots);
    TagRow row[kMaxProbeBuckets];
    // Every row's load issued before any is used.
#pragma unroll
    for (int c = 0; c < kMaxProbeBuckets; ++c) {
        row[c] = TagRow{};
        if (c < count) {
            const int d = c / hashes;
            const int q = c % hashes;
            const uint64_t size = 1ull << (mt.top_log2 - d);
            const uint64_t b = nth_bucket(k, hashes, size, q);
            if (q == 0 || nth_bucket(k, hashes, size, q - 1) != b) {
                r.candidates |= 1u << c;
                r.candidate[c] = global_bucket(mt, d, b);
                row[c] = load_tag_row(mt, r.candidate[c]);
            }
        }
    }
    // The first match in candidate order; the least-loaded bucket with an EMPTY slot.
    uint32_t best = ~0u;  // occupied << 8 | candidate
#pragma unroll
    for (int c = 0; c < kMaxProbeBuckets; ++c) {
        if (((r.candidates >> c) & 1) == 0) {
            continue;
        }
        for (uint32_t hits = r.found ? 0 : tag_mask(row[c], k.fp, slots); hits != 0; hits &= hits - 1) {
            const int s = __ffs(hits) - 1;
            uint64_t meta;
            if (mirror_slot_holds(mt, c / hashes, r.candidate[c], s, k.fp, key, meta)) {
                r.found = true;
                r.meta = meta;
                r.bucket = r.candidate[c];
                r.slot = s;
                break;
            }
        }
        const uint32_t empty = tag_mask(row[c], kTagEmpty, slots);
        if (empty != 0) {
            const uint32_t score = (static_cast<uint32_t>(slots - __popc(empty)) << 8) | static_cast<uint32_t>(c);
            if (score < best) {
                best = score;
                r.place_bucket = r.candidate[c];
                r.place_slot = __ffs(empty) - 1;
            }
        }
    }
    r.placeable = best != ~0u;
    return r;
}

}  // namespace gphash
