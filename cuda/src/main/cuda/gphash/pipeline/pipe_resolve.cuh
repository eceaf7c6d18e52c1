// Stage 2: each group's key looked up in the HBM mirror (one thread per group by the mirror's tags,
// tag_probe.cuh; one warp per group, a lane per candidate slot, where the geometry does not suit tag
// rows), and, once the semantics stage knows which groups insert, a slot claimed in the mirror for
// each of them (CAS in GPU memory: the pool then receives the same slot states by plain stores,
// since this engine is the pool's only writer).
#pragma once
#include <cstdint>
#include "../cache/cache_params.cuh"
#include "../core/key_hash.cuh"
#include "../core/warp_append.cuh"
#include "../probe/warp_probe.cuh"
#include "index_mirror.cuh"
#include "mirror_tags.cuh"
#include "pipe_params.cuh"
#include "tag_probe.cuh"

namespace gphash {

// The key of group e (the key of the operation that claimed its entry).
__device__ __forceinline__ const uint8_t* group_key(const TableParams& t, const PipeParams& p, uint32_t e) {
    const uint32_t op = arr<const uint32_t>(p.owner)[e];
    return arr<const uint8_t>(pipe_batch(p).keys) + static_cast<uint64_t>(op) * t.key_size;
}

// The hashes of group e's key, as the grouping stage computed them.
__device__ __forceinline__ KeyHashes group_hashes(const TableParams& t, const PipeParams& p, uint32_t e) {
    KeyHashes k{};
    const uint64_t* h = arr<const uint64_t>(p.g_hash) + static_cast<uint64_t>(e) * kMaxHashes;
    for (int j = 0; j < t.hashes; ++j) {
        k.h[j] = h[j];
    }
    k.fp = fingerprint_of(k.h[0]);
    return k;
}

// BktCache's access count for one group: its members' weight to the bucket holding the key, or to
// every candidate bucket when it is absent (what the next load selects by).
__device__ __forceinline__ void record_group_access(const TableParams& t, const CacheParams& c, const WindowProbe& w,
                                                    uint32_t weight, uint64_t salt, uint64_t clock) {
    if (c.policy == kRandom || (fmix64(salt * 0x9E3779B97F4A7C15ull ^ clock) & c.sample_mask) != 0) {
        return;
    }
    const int lane = lane_id();
    const bool mine = w.match != 0 ? lane == __ffs(w.match) - 1
                                   : ((w.candidates >> lane) & 1) && lane % static_cast<int>(t.slots) == 0;
    if (mine) {
        unsigned int* score = reinterpret_cast<unsigned int*>(c.scores) + w.bucket;
        if (c.policy == kLfu) {
            atomicAdd(score, weight);
        } else {
            *reinterpret_cast<volatile unsigned int*>(score) = static_cast<unsigned int>(clock);
        }
    }
}

// One warp per group: the key's valid item at batch start (meta word, pool slot, bucket) and its
// fingerprint. For geometries whose buckets do not suit tag rows (tag_probe_fits).
__device__ void resolve_by_warps(const TableParams& t, const TableParams& mt, const PipeParams& p, const CacheParams& c) {
    const uint64_t groups = pipe_count(p, kPipeGroups);
    const int levels = static_cast<int>(mt.level_count);
    for (uint64_t g = global_warp(); g < groups; g += global_warps()) {
        const uint32_t e = arr<const uint32_t>(p.groups)[g];
        const uint8_t* key = group_key(t, p, e);
        const KeyHashes k = group_hashes(t, p, e);
        const WindowProbe w = probe_window<false>(mt, k, key, 0, levels, levels);
        uint64_t meta = kEmpty;
        uint64_t slot = 0;
        uint64_t bucket = 0;
        if (w.match != 0) {
            const int valid = __ffs(w.match) - 1;
            meta = __shfl_sync(kFullMask, w.meta, valid);
            bucket = __shfl_sync(kFullMask, w.bucket, valid);
            slot = pool_slot_of(t, bucket, valid % static_cast<int>(t.slots));
        }
        if (lane_id() == 0) {
            arr<uint64_t>(p.g_meta)[e] = meta;
            arr<uint64_t>(p.g_slot)[e] = slot;
            arr<uint64_t>(p.g_bucket)[e] = bucket;
            arr<uint32_t>(p.g_fp)[e] = k.fp;
        }
        if (cache_on(c)) {
            const uint32_t weight = arr<const uint32_t>(p.g_end)[e] - arr<const uint32_t>(p.g_start)[e];
            record_group_access(t, c, w, weight, e, pipe_batch(p).clock);
        }
    }
}

// One warp per inserting group: claims the first EMPTY slot of the least-loaded candidate bucket in
// the mirror (EMPTY -> INSERT, so no other group takes it) and writes the key there; the group joins
// the value writes. With every candidate bucket full the group fails: its operations rerun after a resize.
// For geometries whose buckets do not suit tag rows.
__device__ void place_by_warps(const TableParams& t, const TableParams& mt, const PipeParams& p) {
    const uint64_t inserts = pipe_count(p, kPipeInserts);
    const int levels = static_cast<int>(mt.level_count);
    for (uint64_t g = global_warp(); g < inserts; g += global_warps()) {
        const uint32_t e = arr<const uint32_t>(p.inserts)[g];
        const uint8_t* key = group_key(t, p, e);
        const KeyHashes k = group_hashes(t, p, e);
        for (;;) {
            const WindowProbe w = probe_window<false>(mt, k, key, 0, levels, levels);
            const int target = least_loaded_empty_lane(w);
            if (target < 0) {
                if (lane_id() == 0) {
                    arr<uint32_t>(p.g_action)[e] = kActFailed;
                    const uint32_t members = arr<const uint32_t>(p.g_end)[e] - arr<const uint32_t>(p.g_start)[e];
                    atomicAdd(pipe_counters(p) + kPipeNeedResize, static_cast<unsigned long long>(members));
                }
                break;
            }
            const uint64_t mslot = __shfl_sync(kFullMask, w.slot, target);  // a mirror address
            const uint64_t bucket = __shfl_sync(kFullMask, w.bucket, target);
            bool won = false;
            if (lane_id() == target) {
                won = mirror_claim(mt, bucket, target % static_cast<int>(t.slots));
            }
            if (!__shfl_sync(kFullMask, won, target)) {
                continue;  // another group took the slot: look again
            }
            warp_store_key<false>(t, reinterpret_cast<uint8_t*>(mslot) + 8, key);
            if (lane_id() == 0) {
                arr<uint64_t>(p.g_slot)[e] = pool_slot_of(t, bucket, target % static_cast<int>(t.slots));
                arr<uint64_t>(p.g_bucket)[e] = bucket;
                const uint32_t at = static_cast<uint32_t>(atomicAdd(pipe_counters(p) + kPipeValueWrites, 1ull));
                arr<uint32_t>(p.vwrites)[at] = e;
            }
            break;
        }
    }
}

// BktCache's access count for one group, from a thread's lookup (see record_group_access).
__device__ __forceinline__ void record_lookup_access(const CacheParams& c, const KeyLookup& r, uint32_t weight,
                                                     uint64_t salt, uint64_t clock) {
    if (c.policy == kRandom || (fmix64(salt * 0x9E3779B97F4A7C15ull ^ clock) & c.sample_mask) != 0) {
        return;
    }
    unsigned int* scores = reinterpret_cast<unsigned int*>(c.scores);
    for (int i = 0; i < kMaxProbeBuckets; ++i) {
        if (r.found ? i > 0 : ((r.candidates >> i) & 1) == 0) {
            continue;
        }
        const uint64_t x = r.found ? r.bucket : r.candidate[i];
        if (c.policy == kLfu) {
            atomicAdd(scores + x, weight);
        } else {
            *reinterpret_cast<volatile unsigned int*>(scores + x) = static_cast<unsigned int>(clock);
        }
    }
}

// Stage 2, one thread per group (tag_probe.cuh): the key's valid item at batch start (meta word,
// pool slot, bucket) and its fingerprint.
__device__ void pipe_resolve(const TableParams& t, const TableParams& mt, const PipeParams& p, const CacheParams& c) {
    if (!tag_probe_fits(mt)) {
        resolve_by_warps(t, mt, p, c);
        return;
    }
    const uint64_t groups = pipe_count(p, kPipeGroups);
    for (uint64_t gi = global_thread(); gi < groups; gi += global_threads()) {
        const uint32_t e = arr<const uint32_t>(p.groups)[gi];
        const KeyHashes k = group_hashes(t, p, e);
        const KeyLookup r = lookup_key(mt, k, group_key(t, p, e));
        arr<uint64_t>(p.g_meta)[e] = r.found ? r.meta : kEmpty;
        arr<uint64_t>(p.g_slot)[e] = r.found ? pool_slot_of(t, r.bucket, r.slot) : 0;
        arr<uint64_t>(p.g_bucket)[e] = r.found ? r.bucket : 0;
        arr<uint32_t>(p.g_fp)[e] = k.fp;
        if (cache_on(c)) {
            const uint32_t weight = arr<const uint32_t>(p.g_end)[e] - arr<const uint32_t>(p.g_start)[e];
            record_lookup_access(c, r, weight, e, pipe_batch(p).clock);
        }
    }
}

// One thread per inserting group: claims the first EMPTY slot of the least-loaded candidate bucket
// in the mirror (EMPTY -> INSERT, so no other group takes it) and writes the key there; the group
// joins the value writes. With every candidate bucket full the group fails: its operations rerun
// after a resize. A lost CAS (another group took the slot) looks again; the warp loops until every
// lane is done, all lanes taking part in every round (the value-write list is appended to per warp).
__device__ void pipe_place(const TableParams& t, const TableParams& mt, const PipeParams& p) {
    if (!tag_probe_fits(mt)) {
        place_by_warps(t, mt, p);
        return;
    }
    const uint64_t inserts = pipe_count(p, kPipeInserts);
    const int ks = static_cast<int>(t.key_size);
    for (uint64_t g0 = global_thread() - lane_id(); g0 < inserts; g0 += global_threads()) {
        const uint64_t gi = g0 + lane_id();
        bool pending = gi < inserts;
        const uint32_t e = pending ? arr<const uint32_t>(p.inserts)[gi] : 0;
        const KeyHashes k = pending ? group_hashes(t, p, e) : KeyHashes{};
        const uint8_t* key = pending ? group_key(t, p, e) : nullptr;
        while (__any_sync(kFullMask, pending)) {
            bool won = false;
            bool failed = false;
            KeyLookup r{};
            if (pending) {
                r = lookup_key(mt, k, key);
                failed = !r.placeable;
                won = !failed && mirror_claim(mt, r.place_bucket, r.place_slot);
            }
            if (won) {
                auto* slot_key = reinterpret_cast<unsigned long long*>(mirror_slot_of(mt, r.place_bucket, r.place_slot) + 8);
                for (int w = 0; w < t.key_stride / 8; ++w) {
                    __stcg(slot_key + w, static_cast<unsigned long long>(key_word(key, w, ks)));
                }
                arr<uint64_t>(p.g_slot)[e] = pool_slot_of(t, r.place_bucket, r.place_slot);
                arr<uint64_t>(p.g_bucket)[e] = r.place_bucket;
            }
            const unsigned long long at = warp_append(pipe_counters(p) + kPipeValueWrites, won);
            if (won) {
                arr<uint32_t>(p.vwrites)[at] = e;
            }
            if (failed) {
                arr<uint32_t>(p.g_action)[e] = kActFailed;
                const uint32_t members = arr<const uint32_t>(p.g_end)[e] - arr<const uint32_t>(p.g_start)[e];
                atomicAdd(pipe_counters(p) + kPipeNeedResize, static_cast<unsigned long long>(members));
            }
            pending = pending && !won && !failed;
        }
    }
}

}  // namespace gphash
