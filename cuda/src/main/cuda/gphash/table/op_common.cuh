// What every operation of a batch kernel shares: its context, block retirement, duplicate removal.
#pragma once
#include <cstdint>
#include "../cache/cache_mirror.cuh"
#include "slot_protocol.cuh"
#include "../core/key_hash.cuh"
#include "../core/slot_meta.cuh"
#include "../core/table_params.cuh"
#include "../core/warp_copy.cuh"
#include "../probe/warp_probe.cuh"

namespace gphash {

// One operation as the whole warp sees it (the leader lane's operation, broadcast).
struct OpContext {
    const TableParams& t;
    const BatchParams& b;
    uint8_t* pool;
    uint64_t op;          // index in the batch
    const uint8_t* key;   // in the batch's key buffer
    KeyHashes k;
    uint64_t block;       // the value block the host reserved for this operation (writes)
    bool staged;          // the operation's value is written to `block` and fenced
    bool consumed;        // `block` was published in a slot
    const CacheParams* cache;  // BktCache, or nullptr when there is none
    uint32_t weight;      // operations the probe serves (a group's members), for the access counters
    bool probed;          // the first probe was made (accesses are recorded once per operation)
    bool hit;             // the first probe read no bucket from the pool
};

__device__ __forceinline__ uint64_t* counters(const BatchParams& b) {
    return reinterpret_cast<uint64_t*>(b.counters);
}

// Hands an unlinked value block to the host, which frees it once no kernel can still read it.
__device__ __forceinline__ void retire_block(const BatchParams& b, uint64_t value_offset) {
    const uint64_t i = atomicAdd(reinterpret_cast<unsigned long long*>(counters(b) + kRetiredCount), 1ull);
    if (i < b.retired_capacity) {
        reinterpret_cast<uint64_t*>(b.retired)[i] = value_offset;
    }
    // Past the capacity the block stays marked in use until the host rebuilds free space from a scan.
}

__device__ __forceinline__ void count(const BatchParams& b, Counter c, uint64_t n) {
    if (n != 0) {
        atomicAdd(reinterpret_cast<unsigned long long*>(counters(b) + c), static_cast<unsigned long long>(n));
    }
}

// Writes the operation's value into its reserved block once, and fences it before any slot refers to it.
__device__ __forceinline__ void stage_value(OpContext& c) {
    if (!c.staged) {
        write_value_block(c.t, c.pool, c.block, reinterpret_cast<const uint8_t*>(c.b.values) + c.op * c.t.value_size,
                          static_cast<uint64_t>(c.t.value_size));
        c.staged = true;
    }
}

// After a pool write to lane `lane`'s slot: the cached copy follows (the pool first, the cache after).
__device__ __forceinline__ void mirror_lane(const OpContext& c, const WindowProbe& p, int lane) {
    if (c.cache != nullptr) {
        const uint64_t x = __shfl_sync(kFullMask, p.bucket, lane);
        const uint64_t slot = __shfl_sync(kFullMask, p.slot, lane);
        mirror_slot(c.t, c.cache, x, lane % static_cast<int>(c.t.slots), slot);
    }
}

// Lane `valid` swaps its slot's meta word from `expected` to `desired` (one CAS); if it won, the cached
// copy follows and the block `expected` named is retired unless another match of `p` shares it.
// Returns, to every lane, whether it won (false: the slot changed under the operation, which probes
// again). Deletes, updates and a group's net effect all replace the valid item this way.
__device__ __forceinline__ bool replace_valid_item(OpContext& c, const WindowProbe& p, int valid, uint64_t expected,
                                                   uint64_t desired) {
    bool won = false;
    if (lane_id() == valid) {
        won = swap_slot(c.pool, p.slot, expected, desired);
    }
    if (!__shfl_sync(kFullMask, won, valid)) {
        return false;
    }
    mirror_lane(c, p, valid);
    const uint32_t shared = lanes_sharing_value(p, 1u << valid);
    if (lane_id() == valid && shared == 0) {
        retire_block(c.b, meta_block(c.t, expected));
    }
    return true;
}

// Clears the matches of `p` other than lane `keep` (duplicates of the key, GPHash §3.2.2), each lane
// its own slot, and retires their blocks unless another match shares them.
__device__ __forceinline__ void remove_duplicates(OpContext& c, const WindowProbe& p, int keep) {
    const uint32_t dups = p.match & ~(1u << keep);
    if (dups == 0) {
        return;
    }
    const uint32_t shared = lanes_sharing_value(p, dups);
    const int lane = lane_id();
    bool removed = false;
    if ((dups >> lane) & 1) {
        removed = swap_slot(c.pool, p.slot, p.meta, kEmpty);
        if (removed) {
            if (!((shared >> lane) & 1)) {
                retire_block(c.b, meta_block(c.t, p.meta));
            }
        }
    }
    const uint32_t gone = __ballot_sync(kFullMask, removed);
    if (lane == 0) {
        count(c.b, kItemsRemoved, __popc(gone));
    }
    for (uint32_t m = gone; m != 0; m &= m - 1) {
        mirror_lane(c, p, __ffs(m) - 1);
    }
}

// Counts the operation's access for the next load's selection, for one operation in 2^shift (a hot
// bucket's counter then takes that many fewer atomics): the bucket holding the key, or every
// candidate bucket when it is absent (a negative search reads them all).
__device__ __forceinline__ void record_access(const OpContext& c, const WindowProbe& p) {
    const CacheParams& cp = *c.cache;
    if (cp.policy == kRandom || (fmix64(c.op * 0x9E3779B97F4A7C15ull ^ cp.clock) & cp.sample_mask) != 0) {
        return;
    }
    const int lane = lane_id();
    const bool mine = p.match != 0 ? lane == __ffs(p.match) - 1
                                   : ((p.candidates >> lane) & 1) && lane % static_cast<int>(c.t.slots) == 0;
    if (mine) {
        unsigned int* score = reinterpret_cast<unsigned int*>(cp.scores) + p.bucket;
        if (cp.policy == kLfu) {
            atomicAdd(score, c.weight);
        } else {
            *reinterpret_cast<volatile unsigned int*>(score) = static_cast<unsigned int>(cp.clock);
        }
    }
}

// The operation's probe. With BktCache, the cached candidate buckets first, alone: if they hold the
// key, or every candidate bucket is cached, that settles it with no pool access (a hit). Otherwise
// the full probe, cached buckets from the cache and the others from the pool. With keep_refs the
// caller reads cached data after the probe and gives the references back (release_probe).
__device__ __forceinline__ WindowProbe probe_op(OpContext& c, bool keep_refs = false) {
    const int levels = static_cast<int>(c.t.level_count);
    WindowProbe p;
    bool hit = false;
    if (c.cache != nullptr) {
        p = probe_window<false>(c.t, c.k, c.key, 0, levels, levels, c.cache, true);
        hit = p.match != 0 || p.cached == p.candidates;
        if (!hit) {
            release_probe(c.cache, p);
            p = probe_window<false>(c.t, c.k, c.key, 0, levels, levels, c.cache, false);
        }
        if (!keep_refs) {
            release_probe(c.cache, p);
        }
    } else {
        p = probe_window<false>(c.t, c.k, c.key, 0, levels, levels);
    }
    if (!c.probed) {
        c.probed = true;
        c.hit = hit;
        if (c.cache != nullptr) {
            record_access(c, p);
        }
    }
    return p;
}

// A probe of the pool alone: settles races between inserts of one key (§3.2.2), which must see
// each other's published slots even before their mirrors reach the cache.
__device__ __forceinline__ WindowProbe probe_pool(const OpContext& c) {
    const int levels = static_cast<int>(c.t.level_count);
    return probe_window<false>(c.t, c.k, c.key, 0, levels, levels);
}

}  // namespace gphash
