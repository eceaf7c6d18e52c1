// The batch kernel (§3.2.1): one thread per operation; each warp serves its lanes' operations one at
// a time: a ballot finds the pending ones, shuffles broadcast the active one's key hashes, and the
// whole warp probes, copies and decides together, with one owner lane per CAS.
#pragma once
#include "batch_groups.cuh"
#include "op_common.cuh"
#include "op_delete.cuh"
#include "op_insert.cuh"
#include "op_search.cuh"
#include "op_update.cuh"

namespace gphash {

__device__ void run_batch(const TableParams& t, const BatchParams& b, const CacheParams& cp) {
    const CacheParams* cache = cache_on(cp) ? &cp : nullptr;
    unsigned long long hits = 0;
    unsigned long long misses = 0;
    const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    const uint64_t group = i < b.n ? reinterpret_cast<const uint64_t*>(b.op_group)[i] : kNoOp;
    // Each group runs once, in the warp of the operation that created its entry.
    const bool mine = group != kNoOp && reinterpret_cast<const uint64_t*>(b.group_owner)[group] == i;
    const auto* keys = reinterpret_cast<const uint8_t*>(b.keys);
    const auto* kinds = reinterpret_cast<const uint8_t*>(b.kinds);
    KeyHashes own{};
    if (mine) {
        own = hash_all<false>(t, keys + i * t.key_size);  // every lane hashes its own key, in parallel
    }
    uint32_t pending = __ballot_sync(kFullMask, mine);
    while (pending != 0) {
        const int leader = __ffs(pending) - 1;
        pending &= pending - 1;
        const uint64_t op = __shfl_sync(kFullMask, i, leader);
        const uint64_t g = __shfl_sync(kFullMask, group, leader);
        const int kind = kinds[op];
        const unsigned int members = reinterpret_cast<const unsigned int*>(b.group_count)[g];
        OpContext c{t, b, reinterpret_cast<uint8_t*>(t.pool), op, keys + op * t.key_size,
                    shfl_hashes(own, leader, static_cast<int>(t.hashes)),
                    writes_value(kind) ? reinterpret_cast<const uint64_t*>(b.blocks)[op] : 0, false, false,
                    cache, members, false, false};
        if (members > 1) {
            op_group_combined(c, reinterpret_cast<const uint64_t*>(b.group_top)[g]);
            (c.hit ? hits : misses) += members;
            continue;
        }
        uint8_t code;
        switch (kind) {
            case kGet: code = op_get(c); break;
            case kPut: code = op_insert(c, true); break;
            case kInsert: code = op_insert(c, false); break;
            case kUpdate: code = op_update(c, false); break;
            case kDelete: code = op_delete(c); break;
            case kReadModifyWrite: code = op_update(c, true); break;
            default: code = kRetry; break;  // the host validates kinds; never reached
        }
        if (lane_id() == 0) {
            reinterpret_cast<uint8_t*>(b.codes)[op] = code | (c.consumed ? kConsumedFlag : 0);
        }
        (c.hit ? hits : misses) += 1;
    }
    if (cache != nullptr && lane_id() == 0 && hits + misses != 0) {
        auto* stats = reinterpret_cast<unsigned long long*>(cp.stats);
        atomicAdd(stats + kCacheHits, hits);
        atomicAdd(stats + kCacheMisses, misses);
    }
}

// After the last run of a device-resident batch: hands the host the reserved blocks no slot took
// (to free them) and clears the consumed flag from the codes the application reads.
__device__ void finish_device_batch(const BatchParams& b) {
    const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    if (i >= b.n) {
        return;
    }
    auto* codes = reinterpret_cast<uint8_t*>(b.codes);
    const uint8_t code = codes[i];
    if (writes_value(reinterpret_cast<const uint8_t*>(b.kinds)[i]) && (code & kConsumedFlag) == 0) {
        retire_block(b, reinterpret_cast<const uint64_t*>(b.blocks)[i]);
    }
    codes[i] = code & 0x7f;
}

// Counts the operations of a batch that write a value, so the host reserves blocks for a batch that
// already lives in device memory without copying its kinds back.
__device__ void count_writes(const BatchParams& b) {
    const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    const bool w = i < b.n && writes_value(reinterpret_cast<const uint8_t*>(b.kinds)[i]);
    const uint32_t n = __popc(__ballot_sync(kFullMask, w));
    if (lane_id() == 0 && n != 0) {
        atomicAdd(reinterpret_cast<unsigned long long*>(b.counters), static_cast<unsigned long long>(n));
    }
}

// Gives every value-writing operation of a device-resident batch the next reserved block, in batch order.
__device__ void assign_blocks(const BatchParams& b, const uint64_t* reserved) {
    const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    if (i < b.n && writes_value(reinterpret_cast<const uint8_t*>(b.kinds)[i])) {
        const uint64_t j = atomicAdd(reinterpret_cast<unsigned long long*>(b.counters), 1ull);
        reinterpret_cast<uint64_t*>(b.blocks)[i] = reserved[j];
    }
}

}  // namespace gphash
