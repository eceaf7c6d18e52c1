// Stage 1 of the pipeline: operations grouped by key. Each operation finds or claims its key's entry
// in an open-addressing table (the entry number names the group), then a stable radix sort by entry
// (radix_sort.cuh) makes every group a run of sorted positions in batch order.
#pragma once
#include <cstdint>
#include "../core/key_hash.cuh"
#include "pipe_params.cuh"

namespace gphash {

__device__ __forceinline__ bool group_keys_equal(const uint8_t* a, const uint8_t* b, int key_size) {
    const int words = (key_size + 7) / 8;
    for (int w = 0; w < words; ++w) {
        if (key_word(a, w, key_size) != key_word(b, w, key_size)) {
            return false;
        }
    }
    return true;
}

// One thread per batch position: the entry of the position's key (sort key) and its operation (sort
// value); the entries claimed are counted (the batch's distinct keys).
__device__ void pipe_group(const TableParams& t, const PipeParams& p) {
    if (pipe_count(p, kPipeUngrouped) != 0) {
        return;  // the identity groups stand in (pipe_decide)
    }
    const PipeBatch& b = pipe_batch(p);
    const int ks = static_cast<int>(t.key_size);
    const auto* keys = arr<const uint8_t>(b.keys);
    auto* owner = arr<unsigned int>(p.owner);
    const uint64_t mask = p.table_capacity - 1;
    const int lane = lane_id();
    for (uint64_t i0 = global_thread() - lane; i0 < b.n; i0 += global_threads()) {
        const uint64_t i = i0 + lane;
        bool claimed = false;
        if (i < b.n) {
            const uint32_t op = op_at(b, i);
            const uint8_t* key = keys + static_cast<uint64_t>(op) * ks;
            const uint64_t h0 = hash_key<false>(key, ks, t.seed[0]);
            uint64_t s = h0 & mask;
            for (;;) {
                const unsigned int o = atomicCAS(owner + s, kNoEntry, op);
                if (o == kNoEntry) {
                    // This operation's key names the group: its hashes are computed here, once, for the
                    // stages that probe (a coalesced pass instead of a chain of loads per group later).
                    uint64_t* h = arr<uint64_t>(p.g_hash) + s * kMaxHashes;
                    h[0] = h0;
                    for (int j = 1; j < t.hashes; ++j) {
                        h[j] = hash_key<false>(key, ks, t.seed[j]);
                    }
                    claimed = true;
                    break;
                }
                if (group_keys_equal(keys + static_cast<uint64_t>(o) * ks, key, ks)) {
                    break;
                }
                s = (s + 1) & mask;
            }
            arr<uint32_t>(p.sort_keys)[i] = static_cast<uint32_t>(s);
            arr<uint32_t>(p.sort_vals)[i] = op;
        }
        warp_append(pipe_counters(p) + kPipeDistinct, claimed);
    }
}

constexpr int kDecideSamples = 1024;
constexpr int kDecideSlots = 2048;

// One block: whether this batch runs grouped. Grouping buys a batch of reads one pool read per key
// and costs a hash table and a sort; a batch of reads whose keys hardly repeat runs
// ungrouped. The block samples kDecideSamples operations at a stride, counts equal keys among them
// (by a 64-bit hash) in shared memory, and from the colliding pairs estimates the chance c that two
// operations share a key; n * c / 2 estimates the share of the batch's operations that repeat a key
// (uniform keys over K: n / 2K). A tenth or more: grouped. Ungrouped, the sort sees no operation and
// the identity groups stand in. Modes: kDecideWrites (a batch that writes: always grouped),
// kDecideReads (decide), kDecideMeasure (the host queued the batch ungrouped, predicting from the
// last batch; the estimate is recorded for the next prediction).
constexpr int kDecideWrites = 0;
constexpr int kDecideReads = 1;
constexpr int kDecideMeasure = 2;

__device__ void pipe_decide(const TableParams& t, const PipeParams& p, int mode) {
    __shared__ unsigned long long tags[kDecideSlots];
    __shared__ unsigned int counts[kDecideSlots];
    __shared__ unsigned long long pairs;
    const PipeBatch& b = pipe_batch(p);
    const uint64_t n = b.n;
    if (mode == kDecideWrites || n < 2) {
        if (threadIdx.x == 0) {
            const bool ungrouped = mode == kDecideMeasure;
            pipe_counters(p)[kPipeUngrouped] = ungrouped ? 1 : 0;
            pipe_counters(p)[kPipeSortN] = ungrouped ? 0 : n;
            pipe_counters(p)[kPipeRepeats] = 0;
        }
        return;
    }
    for (int i = threadIdx.x; i < kDecideSlots; i += blockDim.x) {
        tags[i] = 0;
        counts[i] = 0;
    }
    if (threadIdx.x == 0) {
        pairs = 0;
    }
    __syncthreads();
    const int ks = static_cast<int>(t.key_size);
    const uint64_t m = n < kDecideSamples ? n : kDecideSamples;
    const uint64_t stride = n / m;
    for (uint64_t i = threadIdx.x; i < m; i += blockDim.x) {
        const uint32_t op = op_at(b, i * stride);
        const uint64_t h = hash_key<false>(arr<const uint8_t>(b.keys) + static_cast<uint64_t>(op) * ks, ks, t.seed[0]) | 1;
        uint32_t s = static_cast<uint32_t>(h >> 40) & (kDecideSlots - 1);
        for (;;) {
            const unsigned long long seen = atomicCAS(&tags[s], 0ull, h);
            if (seen == 0 || seen == h) {
                atomicAdd(&counts[s], 1u);
                break;
            }
            s = (s + 1) & (kDecideSlots - 1);
        }
    }
    __syncthreads();
    unsigned long long mine = 0;
    for (int i = threadIdx.x; i < kDecideSlots; i += blockDim.x) {
        mine += static_cast<unsigned long long>(counts[i]) * (counts[i] - (counts[i] > 0 ? 1 : 0)) / 2;
    }
    atomicAdd(&pairs, mine);
    __syncthreads();
    if (threadIdx.x == 0) {
        const double c = static_cast<double>(pairs) / (static_cast<double>(m) * static_cast<double>(m - 1) / 2);
        const bool repeats = static_cast<double>(n) * c / 2 >= 0.1;
        const bool ungrouped = mode == kDecideMeasure || !repeats;
        pipe_counters(p)[kPipeUngrouped] = ungrouped ? 1 : 0;
        pipe_counters(p)[kPipeSortN] = ungrouped ? 0 : n;
        pipe_counters(p)[kPipeRepeats] = repeats ? 1 : 0;
    }
}

// One thread per sorted position: group boundaries, the group list, per-group fields reset, and the
// input of the presence scan (the position if it sets presence, else -1).
__device__ void pipe_heads(const PipeParams& p) {
    if (pipe_count(p, kPipeUngrouped) != 0) {
        return;  // the identity groups stand in
    }
    const PipeBatch& b = pipe_batch(p);
    const auto* entry = arr<const uint32_t>(p.sorted_entry);
    const auto* kinds = arr<const uint8_t>(b.kinds);
    const int lane = lane_id();
    for (uint64_t i0 = global_thread() - lane; i0 < p.capacity; i0 += global_threads()) {
        const uint64_t i = i0 + lane;
        const bool live = i < b.n;
        const uint32_t e = live ? entry[i] : 0;
        const bool head = live && (i == 0 || entry[i - 1] != e);
        const bool tail = live && (i + 1 == b.n || entry[i + 1] != e);
        const uint32_t at = warp_append(pipe_counters(p) + kPipeGroups, head);
        if (head) {
            arr<uint32_t>(p.groups)[at] = e;
            arr<uint32_t>(p.g_start)[e] = static_cast<uint32_t>(i);
            arr<uint32_t>(p.g_need)[e] = 0;
            arr<uint32_t>(p.g_action)[e] = kActNone;
            arr<uint32_t>(p.g_read)[e] = kNoEntry;
            arr<uint64_t>(p.g_block)[e] = 0;
        }
        if (tail) {
            arr<uint32_t>(p.g_end)[e] = static_cast<uint32_t>(i + 1);
        }
        if (i < p.capacity) {
            const bool sets = live && sets_presence(kinds[arr<const uint32_t>(p.sorted_op)[i]]);
            arr<int32_t>(p.last_set)[i] = sets ? static_cast<int32_t>(i) : -1;
        }
    }
}

// For a batch whose keys do not repeat: every operation its own group, in batch order, without the
// key table and the sort. Reads whose keys (almost) never repeat (pipe_decide), or a batch of any
// operations whose keys the host found distinct (a small coalesced batch). A group of one needs no
// scan: the presence and value source before its member are the batch start's, and after it the
// member's own (last_set / last_src at its position, or none); pipe_source_input fills last_src.
__device__ void pipe_identity_groups(const TableParams& t, const PipeParams& p) {
    if (pipe_count(p, kPipeUngrouped) == 0) {
        return;
    }
    const PipeBatch& b = pipe_batch(p);
    const int ks = static_cast<int>(t.key_size);
    for (uint64_t i = global_thread(); i < p.capacity; i += global_threads()) {
        if (i < b.n) {
            const uint32_t op = op_at(b, i);
            const uint8_t* key = arr<const uint8_t>(b.keys) + static_cast<uint64_t>(op) * ks;
            const uint32_t e = static_cast<uint32_t>(i);
            arr<uint32_t>(p.sorted_entry)[i] = e;
            arr<uint32_t>(p.sorted_op)[i] = op;
            arr<uint32_t>(p.groups)[i] = e;
            arr<uint32_t>(p.owner)[e] = op;
            arr<uint32_t>(p.g_start)[e] = e;
            arr<uint32_t>(p.g_end)[e] = e + 1;
            arr<uint32_t>(p.g_need)[e] = 0;
            arr<uint32_t>(p.g_action)[e] = kActNone;
            arr<uint32_t>(p.g_read)[e] = kNoEntry;
            arr<uint64_t>(p.g_block)[e] = 0;
            uint64_t* h = arr<uint64_t>(p.g_hash) + static_cast<uint64_t>(e) * kMaxHashes;
            for (int j = 0; j < t.hashes; ++j) {
                h[j] = hash_key<false>(key, ks, t.seed[j]);
            }
        }
        // Both scans' results for groups of one, without the scans (reads set neither).
        const bool sets = i < b.n && sets_presence(arr<const uint8_t>(b.kinds)[op_at(b, i)]);
        arr<int32_t>(p.last_set)[i] = sets ? static_cast<int32_t>(i) : -1;
        arr<int32_t>(p.last_src)[i] = -1;
    }
    if (global_thread() == 0) {
        pipe_counters(p)[kPipeGroups] = b.n;
    }
}

}  // namespace gphash
