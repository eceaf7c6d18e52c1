// A small batch of gets in one launch. The pipeline's stages are a few dozen launches whose fixed
// cost (tens of microseconds) is what a coalesced batch of a handful of single-key gets waits for;
// at that size, ordering pool reads by address buys nothing. Here one sub-group of lanes per
// operation: its first lane probes the HBM mirror by tags (tag_probe.cuh) and its lanes copy the
// value from the pool. Gets of one key in one batch all see the batch-start value, as they do in
// the pipeline, so no grouping is needed. A host batch's results go to one output buffer (values,
// then one code byte per operation) so the host copies them back at once; a device-resident batch's
// go straight to its columns.
#pragma once
#include <cstdint>
#include "../cache/cache_params.cuh"
#include "../core/key_hash.cuh"
#include "../core/slot_meta.cuh"
#include "../core/slot_meta_format.cuh"
#include "../probe/warp_probe.cuh"
#include "pipe_params.cuh"
#include "pipe_resolve.cuh"
#include "tag_probe.cuh"
#include "value_lanes.cuh"

namespace gphash {

// Arguments of one small batch of gets. Mirrors org.gphash.cuda.pipeline.SmallReads.
struct SmallReadsArgs {
    uint64_t n;      // operations
    uint64_t keys;   // const uint8_t[n * key_size]
    uint64_t out;    // uint8_t[n * value_size]: the values found
    uint64_t codes;  // uint8_t[n]: outcome codes (a host batch's right after its values, so that one copy brings both back)
    uint64_t clock;  // BktCache's clock, for its access counts
};

// One warp per get, for geometries whose buckets do not suit tag rows (tag_probe_fits).
__device__ void small_reads_by_warps(const TableParams& t, const TableParams& mt, const CacheParams& c,
                                     const SmallReadsArgs& a) {
    const uint64_t vs = static_cast<uint64_t>(t.value_size);
    const auto* pool = reinterpret_cast<const uint8_t*>(t.pool);
    const int levels = static_cast<int>(mt.level_count);
    const ValueLanes whole{kWarpSize, 1, 0, lane_id(), 0};
    for (uint64_t i = global_warp(); i < a.n; i += global_warps()) {
        const uint8_t* key = arr<const uint8_t>(a.keys) + i * t.key_size;
        const KeyHashes k = hash_all<false>(t, key);
        const WindowProbe w = probe_window<false>(mt, k, key, 0, levels, levels);
        if (w.match != 0) {
            const uint64_t meta = __shfl_sync(kFullMask, w.meta, __ffs(w.match) - 1);
            sub_read_value(whole, t, pool, meta, arr<uint8_t>(a.out) + i * vs, true);
        }
        if (lane_id() == 0) {
            arr<uint8_t>(a.codes)[i] = w.match != 0 ? kFound : kNotFound;
        }
        if (cache_on(c)) {
            record_group_access(t, c, w, 1, i, a.clock);
        }
    }
}

__device__ void pipe_small_reads(const TableParams& t, const TableParams& mt, const CacheParams& c,
                                 const SmallReadsArgs& a) {
    if (!tag_probe_fits(mt)) {
        small_reads_by_warps(t, mt, c, a);
        return;
    }
    const uint64_t vs = static_cast<uint64_t>(t.value_size);
    const auto* pool = reinterpret_cast<const uint8_t*>(t.pool);
    // A sub-group of lanes per get: its first lane probes, its lanes copy the value, a word each per step.
    const ValueLanes v = value_lanes(vs);
    for (uint64_t i0 = global_warp() * v.per_warp; i0 < a.n; i0 += global_warps() * v.per_warp) {
        const uint64_t i = i0 + v.sub;
        const bool live = i < a.n;
        KeyLookup r{};
        if (live && v.index == 0) {
            const uint8_t* key = arr<const uint8_t>(a.keys) + i * t.key_size;
            r = lookup_key(mt, hash_all<false>(t, key), key);
            arr<uint8_t>(a.codes)[i] = r.found ? kFound : kNotFound;
            if (cache_on(c)) {
                record_lookup_access(c, r, 1, i, a.clock);
            }
        }
        const bool found = __shfl_sync(kFullMask, r.found, v.leader);
        const uint64_t meta = __shfl_sync(kFullMask, r.meta, v.leader);
        if (live && found) {
            sub_read_value(v, t, pool, meta, arr<uint8_t>(a.out) + i * vs, true);
        }
    }
}

}  // namespace gphash
