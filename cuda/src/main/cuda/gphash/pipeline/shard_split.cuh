// A device-resident batch split by shard on the GPU that holds it (a sharded index's executeOnDevice,
// org.gphash.cuda.shard.DeviceBatchesAcrossShards), with no round trip through the host: each
// operation's shard (shard_hash.cuh, what org.gphash.shard.ShardFunction computes on the host)
// becomes a sort key and its position the value, and one stable radix pass (radix_sort.cuh) lists
// every shard's positions together, in batch order, so that a key's operations keep their order in
// its shard's part. part_columns.cuh then gathers the parts' columns in that order and, after the
// shards ran them, scatters their outcomes back to the caller's positions.
//
// The same launch counts what the host must know before any shard runs: each shard's operations
// (the length of its part), the operations that write a value and those that read one (their
// columns must be given), and kinds a device batch does not take (the conditional ones: the host
// refuses the batch rather than let shards answer kRetry).
#pragma once
#include <cstdint>
#include "../core/shard_hash.cuh"
#include "../core/table_params.cuh"
#include "pipe_params.cuh"

namespace gphash {

// Mirrors org.gphash.cuda.runtime.KernelParams.shardSplit.
struct ShardSplit {
    uint64_t n;
    uint64_t kinds;      // const uint8_t[n], device
    uint64_t keys;       // const uint8_t[n * key_size], device
    uint64_t key_size;
    uint64_t seed;       // the manifest's shard seed
    uint64_t shards;
    uint64_t shard_of;   // uint32_t[n] out: each operation's shard, the sort's keys
    uint64_t positions;  // uint32_t[n] out: 0 to n - 1, the sort's values
    uint64_t totals;     // uint32_t[shards + kSplitTotals], zeroed before: see below
};

// totals[0 .. shards) operations per shard; then these, from totals[shards] on:
constexpr int kSplitWrites = 0;    // operations that write a value (the values column must be given)
constexpr int kSplitReads = 1;     // operations that read one (the out column must be given)
constexpr int kSplitRefused = 2;   // kinds a device batch does not take
constexpr int kSplitTotals = 3;

// A thread per operation; each warp adds its counts with one atomic per distinct shard and per total.
__device__ void shard_split(const ShardSplit& a) {
    const int lane = lane_id();
    auto* totals = arr<uint32_t>(a.totals);
    for (uint64_t i0 = global_thread() - lane; i0 < a.n; i0 += global_threads()) {
        const uint64_t i = i0 + lane;
        const bool valid = i < a.n;
        int kind = kGet;
        uint32_t shard = 0xFFFFFFFFu;  // invalid lanes form a group of their own
        if (valid) {
            kind = arr<const uint8_t>(a.kinds)[i];
            shard = shard_of(arr<const uint8_t>(a.keys) + i * a.key_size, static_cast<int>(a.key_size), a.seed,
                             static_cast<uint32_t>(a.shards));
            arr<uint32_t>(a.shard_of)[i] = shard;
            arr<uint32_t>(a.positions)[i] = static_cast<uint32_t>(i);
        }
        const uint32_t peers = __match_any_sync(kFullMask, shard);
        if (valid && lane == __ffs(peers) - 1) {
            atomicAdd(&totals[shard], static_cast<uint32_t>(__popc(peers)));
        }
        const uint32_t w = __popc(__ballot_sync(kFullMask, valid && writes_value(kind)));
        const uint32_t r = __popc(__ballot_sync(kFullMask, valid && reads_value(kind)));
        const uint32_t x = __popc(__ballot_sync(kFullMask, valid && kind > kReadModifyWrite));
        if (lane == 0) {
            uint32_t* after = totals + a.shards;
            if (w != 0) atomicAdd(after + kSplitWrites, w);
            if (r != 0) atomicAdd(after + kSplitReads, r);
            if (x != 0) atomicAdd(after + kSplitRefused, x);
        }
    }
}

}  // namespace gphash
