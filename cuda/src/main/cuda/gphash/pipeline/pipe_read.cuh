// Stage 4: values read from the pool, at most once per key and in address order. Groups whose
// members output the key's batch-start value are listed and binned by the value's pool offset; a
// warp step then copies a few values, from BktCache when the value's bucket is cached there (no
// pool access) and from the pool otherwise; a last pass hands every member its output (the
// group's pool value, or a member's input value when an earlier write in the group set it).
#pragma once
#include <cstdint>
#include "../cache/cache_params.cuh"
#include "../core/slot_meta.cuh"
#include "../core/slot_meta_format.cuh"
#include "address_bins.cuh"
#include "index_mirror.cuh"
#include "pipe_params.cuh"
#include "value_lanes.cuh"

namespace gphash {

// One thread per group: lists the groups whose pool value some member outputs.
__device__ void pipe_read_list(const TableParams& t, const PipeParams& p) {
    const uint64_t groups = pipe_count(p, kPipeGroups);
    const int lane = lane_id();
    for (uint64_t i0 = global_thread() - lane; i0 < groups; i0 += global_threads()) {
        const uint64_t i = i0 + lane;
        const uint32_t e = i < groups ? arr<const uint32_t>(p.groups)[i] : 0;
        const bool need = i < groups && arr<const uint32_t>(p.g_need)[e] != 0;
        const uint64_t off = need ? meta_block(t, arr<const uint64_t>(p.g_meta)[e]) : 0;
        bin_append(p, kPipeReads, need, off, e);
    }
}

// pipe_gather where no value comes from BktCache: each value read from its block (sub_read_value: the
// header among the block's first words), its length written after it.
__device__ void pipe_gather_blocks(const TableParams& t, const PipeParams& p) {
    const uint64_t reads = pipe_count(p, kPipeReads);
    const uint64_t vs = static_cast<uint64_t>(t.value_size);
    const PipeBatch& b = pipe_batch(p);
    const bool lengths_back = b.out_lengths != 0;
    const ValueLanes v = value_lanes_for(vs, lengths_back);
    const auto* pool = reinterpret_cast<const uint8_t*>(t.pool);
    for (uint64_t r0 = global_warp() * v.per_warp; r0 < reads; r0 += global_warps() * v.per_warp) {
        const uint64_t r = r0 + v.sub;
        const bool live = r < reads;
        uint64_t meta = 0;
        uint8_t* to = nullptr;
        uint32_t* length_to = nullptr;
        if (live && v.index == 0) {
            const uint32_t e = arr<const uint32_t>(p.reads)[r];
            meta = arr<const uint64_t>(p.g_meta)[e];
            const uint32_t start = arr<const uint32_t>(p.g_start)[e];
            if (arr<const uint32_t>(p.g_end)[e] - start == 1) {
                const uint64_t at = out_index(b, arr<const uint32_t>(p.sorted_op)[start]);
                to = arr<uint8_t>(b.out) + at * vs;
                length_to = lengths_back ? arr<uint32_t>(b.out_lengths) + at : nullptr;
            } else {
                to = arr<uint8_t>(p.gather) + r * vs;
                length_to = arr<uint32_t>(p.g_len) + e;
            }
        }
        meta = __shfl_sync(kFullMask, meta, v.leader);
        to = shfl_pointer(to, v.leader);
        if (live) {
            const uint64_t length = sub_read_value(v, t, pool, meta, to, !lengths_back);
            if (length_to != nullptr) {
                *length_to = static_cast<uint32_t>(length);
            }
        }
    }
}

// Copies each listed group's value: to the output of its only member, or to `gather` for a group
// of several members. Sub-groups of lanes per value (value_lanes.cuh), reads in list (address) order.
__device__ void pipe_gather(const TableParams& t, const PipeParams& p, const CacheParams& c) {
    if (!cache_on(c)) {
        pipe_gather_blocks(t, p);
        return;
    }
    const uint64_t reads = pipe_count(p, kPipeReads);
    const uint64_t vs = static_cast<uint64_t>(t.value_size);
    const PipeBatch& b = pipe_batch(p);
    const bool lengths_back = b.out_lengths != 0;
    const ValueLanes v = value_lanes_for(vs, lengths_back);
    const auto* pool = reinterpret_cast<const uint8_t*>(t.pool);
    unsigned long long hits = 0;
    unsigned long long misses = 0;
    for (uint64_t r0 = global_warp() * v.per_warp; r0 < reads; r0 += global_warps() * v.per_warp) {
        const uint64_t r = r0 + v.sub;
        const bool live = r < reads;
        const uint8_t* from_pool = nullptr;
        const uint8_t* from = nullptr;
        uint8_t* to = nullptr;
        const uint8_t* cached = nullptr;
        uint64_t meta = 0;
        uint64_t length = 0;
        int entry = -1;
        if (live && v.index == 0) {
            const uint32_t e = arr<const uint32_t>(p.reads)[r];
            meta = arr<const uint64_t>(p.g_meta)[e];
            from_pool = pool + meta_value_at(t, meta);
            from = from_pool;
            length = meta_value_length(t, pool, meta);
            const uint32_t start = arr<const uint32_t>(p.g_start)[e];
            if (arr<const uint32_t>(p.g_end)[e] - start == 1) {
                const uint64_t at = out_index(b, arr<const uint32_t>(p.sorted_op)[start]);
                to = arr<uint8_t>(b.out) + at * vs;
                if (b.out_lengths != 0) {
                    arr<uint32_t>(b.out_lengths)[at] = static_cast<uint32_t>(length);
                }
            } else {
                to = arr<uint8_t>(p.gather) + r * vs;
                arr<uint32_t>(p.g_len)[e] = static_cast<uint32_t>(length);
            }
            // BktCache holds values of the pool's class (of the value size) only: the engine refuses it
            // where values have lengths of their own.
            if (cache_on(c) && length == vs) {
                const uint64_t x = arr<const uint64_t>(p.g_bucket)[e];
                entry = acquire_entry(c, x);
                if (entry >= 0) {
                    cached = cached_slot(t, c, static_cast<uint32_t>(entry),
                                         slot_index_of(t, x, arr<const uint64_t>(p.g_slot)[e]));
                    if (load_meta(cached, 0) == meta) {
                        from = cached + cached_value_offset(t);
                    }
                }
            }
        }
        const bool from_cache = from != from_pool;
        from = shfl_pointer(from, v.leader);
        from_pool = shfl_pointer(from_pool, v.leader);
        to = shfl_pointer(to, v.leader);
        length = __shfl_sync(kFullMask, length, v.leader);
        if (live) {
            sub_copy_read(v, to, from, length, vs, lengths_back);
        }
        __syncwarp();
        // A cached copy counts only if its meta word did not change meanwhile (a writer marks it busy
        // before changing any byte); otherwise the pool's value is read after all.
        bool again = false;
        if (live && v.index == 0) {
            if (entry >= 0) {
                if (from_cache) {
                    __threadfence();
                    again = load_meta(cached, 0) != meta;
                }
                release_entry(c, entry);
            }
            if (from_cache && !again) {
                ++hits;
            } else {
                ++misses;
            }
        }
        again = __shfl_sync(kFullMask, again, v.leader);
        if (live && again) {
            sub_copy_read(v, to, from_pool, length, vs, lengths_back);
        }
        __syncwarp();
    }
    if (cache_on(c) && (hits | misses) != 0) {
        atomicAdd(pipe_counters(p) + kPipeCacheHits, hits);
        atomicAdd(pipe_counters(p) + kPipeCacheMisses, misses);
    }
}

// Sub-groups of lanes per sorted position: every output value not yet in place.
__device__ void pipe_fanout(const TableParams& t, const PipeParams& p) {
    if (pipe_count(p, kPipeUngrouped) != 0) {
        // Every group is one operation (pipe_identity_groups), whose pool value the gather wrote to its
        // output, and no earlier member can be a value's source: nothing is left to hand out. Walking
        // the positions anyway was most of a negative search's read stage.
        return;
    }
    const PipeBatch& b = pipe_batch(p);
    const uint64_t vs = static_cast<uint64_t>(t.value_size);
    const bool lengths_back = b.out_lengths != 0;
    const ValueLanes v = value_lanes_for(vs, lengths_back);
    for (uint64_t i0 = global_warp() * v.per_warp; i0 < b.n; i0 += global_warps() * v.per_warp) {
        const uint64_t i = i0 + v.sub;
        const uint8_t* from = nullptr;
        uint8_t* to = nullptr;
        uint64_t length = 0;
        if (i < b.n && v.index == 0) {
            const uint32_t src = arr<const uint32_t>(p.vsrc)[i];
            const uint32_t op = arr<const uint32_t>(p.sorted_op)[i];
            if (src == kVsrcPool) {
                const uint32_t e = arr<const uint32_t>(p.sorted_entry)[i];
                if (arr<const uint32_t>(p.g_end)[e] - arr<const uint32_t>(p.g_start)[e] > 1) {
                    from = arr<const uint8_t>(p.gather) + static_cast<uint64_t>(arr<const uint32_t>(p.g_read)[e]) * vs;
                    length = arr<const uint32_t>(p.g_len)[e];
                }
            } else if (src != kVsrcNone) {
                from = arr<const uint8_t>(b.values) + static_cast<uint64_t>(src) * vs;
                length = b.lengths != 0 ? arr<const uint32_t>(b.lengths)[src] : vs;
            }
            if (from != nullptr) {
                const uint64_t at = out_index(b, op);
                to = arr<uint8_t>(b.out) + at * vs;
                if (b.out_lengths != 0) {
                    arr<uint32_t>(b.out_lengths)[at] = static_cast<uint32_t>(length);
                }
            }
        }
        from = shfl_pointer(from, v.leader);
        to = shfl_pointer(to, v.leader);
        length = __shfl_sync(kFullMask, length, v.leader);
        if (from != nullptr) {
            sub_copy_read(v, to, from, length, vs, lengths_back);
        }
    }
}

}  // namespace gphash
