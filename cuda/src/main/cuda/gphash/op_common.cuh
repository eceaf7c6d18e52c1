// What every operation of a batch kernel shares: its context, block retirement, duplicate removal.
#pragma once
#include <cstdint>
#include "key_hash.cuh"
#include "slot_meta.cuh"
#include "table_params.cuh"
#include "warp_copy.cuh"
#include "warp_probe.cuh"

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
        warp_copy(c.pool + c.block, reinterpret_cast<const uint8_t*>(c.b.values) + c.op * c.t.value_size,
                  static_cast<uint64_t>(c.t.value_size));
        persist_fence();
        c.staged = true;
    }
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
        removed = cas_meta(c.pool, p.slot, p.meta, kEmpty);
        if (removed) {
            persist_fence();
            if (!((shared >> lane) & 1)) {
                retire_block(c.b, meta_value_offset(p.meta));
            }
        }
    }
    const uint32_t n = __popc(__ballot_sync(kFullMask, removed));
    if (lane == 0) {
        count(c.b, kItemsRemoved, n);
    }
}

__device__ __forceinline__ WindowProbe probe_op(const OpContext& c) {
    const int levels = static_cast<int>(c.t.level_count);
    return probe_window<false>(c.t, c.k, c.key, 0, levels, levels);
}

}  // namespace gphash
