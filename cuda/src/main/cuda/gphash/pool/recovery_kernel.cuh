// Recovery on open, as kernels over every level in parallel (the paper's artifact scans only the
// bottom one): clear INSERT slots, clear torn items (fingerprint not that of the key, or in no
// candidate bucket of the key), clear every copy of a key but its valid item; mark the value blocks
// the remaining items use. The host first runs recover_level judging only and mark_level, and
// writes (recover_level proper) only once both have found nothing a crash cannot explain.
#pragma once
#include "scan_params.cuh"
#include "../table/slot_protocol.cuh"
#include "../probe/warp_probe.cuh"

namespace gphash {

// The first match of the key at `key` (in the pool) over all levels, window by window; also whether
// some match other than `self` refers to `self_value`.
struct FirstMatch {
    uint64_t slot;
    bool found;
    bool value_shared;
};

__device__ __forceinline__ FirstMatch first_match_all_levels(const TableParams& t, const KeyHashes& k, const uint8_t* key,
                                                            uint64_t self, uint64_t self_value) {
    FirstMatch f{0, false, false};
    const int levels = static_cast<int>(t.level_count);
    const int per = levels_per_window(t);
    for (int d0 = 0; d0 < levels; d0 += per) {
        const WindowProbe p = probe_window<true>(t, k, key, d0, min(per, levels - d0), 0);
        if (!f.found && p.match != 0) {
            f.found = true;
            f.slot = __shfl_sync(kFullMask, p.slot, __ffs(p.match) - 1);
        }
        const bool m = (p.match >> lane_id()) & 1;
        f.value_shared |= __any_sync(kFullMask, m && p.slot != self && meta_value_offset(p.meta) == self_value);
    }
    return f;
}

// Which items of a warp's lanes are their key's valid item (first match over all levels), which
// are copies of another valid item, and which no probe of their key finds (misplaced). `k` holds
// each lane's hashes, `candidates` the lanes whose item is whole (fingerprint matches).
struct ItemVerdicts {
    uint32_t valid;
    uint32_t duplicates;
    uint32_t misplaced;
};

__device__ __forceinline__ ItemVerdicts judge_items(const TableParams& t, const uint8_t* pool, const KeyHashes& k,
                                                   uint64_t slot, uint32_t candidates) {
    ItemVerdicts v{0, 0, 0};
    while (candidates != 0) {
        const int leader = __ffs(candidates) - 1;
        candidates &= candidates - 1;
        const uint64_t lslot = __shfl_sync(kFullMask, slot, leader);
        const KeyHashes lk = shfl_hashes(k, leader, static_cast<int>(t.hashes));
        const FirstMatch f = first_match_all_levels(t, lk, pool + lslot + 8, lslot, 0);
        // Only this lane ever clears its own slot, so the leader's item is among the matches if
        // it sits where its key is probed.
        if (!f.found) {
            v.misplaced |= 1u << leader;
        } else if (f.slot != lslot) {
            v.duplicates |= 1u << leader;
        } else {
            v.valid |= 1u << leader;
        }
    }
    return v;
}

__device__ void recover_level(const TableParams& t, const ScanParams& s) {
    uint8_t* pool = reinterpret_cast<uint8_t*>(t.pool);
    const bool judge_only = (s.mode & kScanJudgeOnly) != 0;
    const int depth = static_cast<int>(s.depth);
    const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    const bool mine = i < slots_at(t, depth);
    const uint64_t slot = mine ? slot_of(t, depth, i) : 0;
    const uint64_t meta = mine ? load_meta(pool, slot) : kEmpty;

    const bool half_inserted = meta != kEmpty && !meta_is_item(meta);
    KeyHashes k{};
    bool torn = false;
    if (meta_is_item(meta)) {
        k = hash_all<true>(t, pool + slot + 8);
        torn = k.fp != meta_fingerprint(meta);
    }
    if ((half_inserted || torn) && !judge_only) {
        // Neither can match any key's probe, so clearing them changes no other lane's decision.
        publish_slot(pool, slot, kEmpty);
    }
    scan_count(s, kInsertCleared, __ballot_sync(kFullMask, half_inserted));
    scan_count(s, kTornCleared, __ballot_sync(kFullMask, torn));

    const ItemVerdicts v = judge_items(t, pool, k, slot, __ballot_sync(kFullMask, meta_is_item(meta) && !torn));
    if ((((v.duplicates | v.misplaced) >> lane_id()) & 1) && !judge_only) {
        publish_slot(pool, slot, kEmpty);
    }
    scan_count(s, kDuplicatesCleared, v.duplicates);
    scan_count(s, kTornCleared, v.misplaced);
}

// Marks the value block of every item of one level in the bitmap (with kScanValidOnly: of every
// item that is its key's valid item); counts those items, offsets that are no block of the heap,
// and blocks two items share (both are corruption: the host refuses the pool). Writes no pool byte.
// With kScanByClass (format 3's heap of size classes) the bitmap is the close record's, a bit per
// 16-byte unit where a block in use starts, and each segment's class is the one its items' words name
// (two classes in one segment are corruption too): the host restores the heap from both as from a
// clean close, checking every mark against its segment's class (SegmentHeap.restore).
__device__ void mark_level(const TableParams& t, const ScanParams& s) {
    const uint8_t* pool = reinterpret_cast<const uint8_t*>(t.pool);
    const int depth = static_cast<int>(s.depth);
    const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    const bool mine = i < slots_at(t, depth);
    const uint64_t slot = mine ? slot_of(t, depth, i) : 0;
    const uint64_t meta = mine ? load_meta(pool, slot) : kEmpty;
    bool item = meta_is_item(meta);
    if ((s.mode & kScanValidOnly) != 0) {
        KeyHashes k{};
        bool whole = false;
        if (item) {
            k = hash_all<true>(t, pool + slot + 8);
            whole = k.fp == meta_fingerprint(meta);
        }
        const ItemVerdicts v = judge_items(t, pool, k, slot, __ballot_sync(kFullMask, whole));
        item = (v.valid >> lane_id()) & 1;
    }
    bool bad = false;
    bool shared = false;
    bool other_class = false;
    if (item) {
        const uint64_t off = meta_block(t, meta);
        const auto* co = reinterpret_cast<const uint64_t*>(s.chunk_offset);
        const auto* cl = reinterpret_cast<const uint64_t*>(s.chunk_length);
        const auto* cf = reinterpret_cast<const uint64_t*>(s.chunk_first);
        int lo = 0;
        int hi = static_cast<int>(s.chunks) - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (co[mid] <= off) lo = mid; else hi = mid - 1;
        }
        const uint64_t stride = static_cast<uint64_t>(s.value_stride);
        if (s.chunks == 0 || off < co[lo] || (off - co[lo]) % stride != 0 || (off - co[lo]) / stride >= cl[lo] / stride) {
            bad = true;
        } else {
            const uint64_t block = cf[lo] + (off - co[lo]) / stride;
            const unsigned long long bit = 1ull << (block & 63);
            const unsigned long long old = atomicOr(reinterpret_cast<unsigned long long*>(s.bitmap) + (block >> 6), bit);
            shared = (old & bit) != 0;
            if ((s.mode & kScanByClass) != 0) {
                // A block that takes a run of segments names its class in the first one only.
                const uint32_t c = meta_v3_class(meta);
                const uint32_t was = atomicCAS(reinterpret_cast<uint32_t*>(s.segment_class) + lo, kNoSegmentClass, c);
                other_class = was != kNoSegmentClass && was != c;
            }
        }
    }
    scan_count(s, kItems, __ballot_sync(kFullMask, item));
    scan_count(s, kBadOffsets, __ballot_sync(kFullMask, bad));
    scan_count(s, kSharedBlocks, __ballot_sync(kFullMask, shared));
    scan_count(s, kOtherClasses, __ballot_sync(kFullMask, other_class));
}

}  // namespace gphash
