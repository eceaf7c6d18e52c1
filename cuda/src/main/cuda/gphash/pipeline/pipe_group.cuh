// Stage 1 of the pipeline: operations grouped by key. Each operation finds or claims its key's entry
// in an open-addressing table (the entry number names the group), then a stable radix sort by entry
// (radix_sort.cuh) makes every group a run of sorted positions in batch order.
#pragma once
#include <cstdint>
#include "../key_hash.cuh"
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
    const PipeBatch& b = pipe_batch(p);
    const int ks = static_cast<int>(t.key_size);
    const auto* keys = arr<const uint8_t>(b.keys);
    auto* owner = arr<unsigned int>(p.owner);
    const uint64_t mask = p.table_capacity - 1;
    const int lane = static_cast<int>(threadIdx.x) & (kWarpSize - 1);
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

// One thread: whether this batch runs grouped. A batch of reads (`may_skip`) whose keys hardly
// repeat skips the sort: grouping would buy it no saved pool read, and costs a sort. The sort then
// sees no operation, and the identity groups stand in for the groups.
__device__ void pipe_decide(const PipeParams& p, int may_skip) {
    if (global_thread() != 0) {
        return;
    }
    const uint64_t n = pipe_batch(p).n;
    const bool ungrouped = may_skip != 0 && pipe_count(p, kPipeDistinct) * 10 >= n * 9;
    pipe_counters(p)[kPipeUngrouped] = ungrouped ? 1 : 0;
    pipe_counters(p)[kPipeSortN] = ungrouped ? 0 : n;
}

// Whether operations of this kind set the key's presence (PUT and INSERT: present after; DELETE: absent).
__device__ __forceinline__ bool sets_presence(int kind) { return kind == kPut || kind == kInsert || kind == kDelete; }

// One thread per sorted position: group boundaries, the group list, per-group fields reset, and the
// input of the presence scan (the position if it sets presence, else -1).
__device__ void pipe_heads(const PipeParams& p) {
    if (pipe_count(p, kPipeUngrouped) != 0) {
        return;  // the identity groups stand in
    }
    const PipeBatch& b = pipe_batch(p);
    const auto* entry = arr<const uint32_t>(p.sorted_entry);
    const auto* kinds = arr<const uint8_t>(b.kinds);
    const int lane = static_cast<int>(threadIdx.x) & (kWarpSize - 1);
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

// For a batch of reads only whose keys (almost) never repeat (pipe_decide): every operation its own
// group, in batch order, without the sort. What grouping buys reads is one pool read per key.
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
        // No operation sets presence or a value: both scans' results, without the scans.
        arr<int32_t>(p.last_set)[i] = -1;
        arr<int32_t>(p.last_src)[i] = -1;
    }
    if (global_thread() == 0) {
        pipe_counters(p)[kPipeGroups] = b.n;
    }
}

}  // namespace gphash
