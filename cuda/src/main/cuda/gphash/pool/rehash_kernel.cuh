// Resize step 3 (§3.2.3, docs/DESIGN.md) as a kernel: every item of the bottom level is copied into
// the least-loaded candidate bucket above it (same value offset: no value moves), fenced, and only
// then cleared below. A copy that is not its key's valid item is dropped instead. Items whose every
// upper candidate bucket is full stay where they are and are counted: the host adds a top level and
// runs the kernel again.
#pragma once
#include "recovery_kernel.cuh"
#include "scan_params.cuh"
#include "../table/slot_protocol.cuh"
#include "../core/warp_copy.cuh"
#include "../probe/warp_probe.cuh"

namespace gphash {

__device__ __forceinline__ void scan_retire(const ScanParams& s, uint64_t value_offset) {
    const uint64_t j = atomicAdd(reinterpret_cast<unsigned long long*>(s.counters) + kScanRetired, 1ull);
    if (j < s.retired_capacity) {
        reinterpret_cast<uint64_t*>(s.retired)[j] = value_offset;
    }
}

__device__ void rehash_bottom(const TableParams& t, const ScanParams& s) {
    uint8_t* pool = reinterpret_cast<uint8_t*>(t.pool);
    const int levels = static_cast<int>(t.level_count);
    const int bottom = levels - 1;
    const int per = levels_per_window(t);
    const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    const bool mine = i < slots_at(t, bottom);
    const uint64_t slot = mine ? slot_of(t, bottom, i) : 0;
    const uint64_t meta = mine ? load_meta(pool, slot) : kEmpty;
    const bool item = meta_is_item(meta);
    KeyHashes k{};
    if (item) {
        k = hash_all<true>(t, pool + slot + 8);
    }
    uint32_t pending = __ballot_sync(kFullMask, item);
    uint32_t moved = 0, dropped = 0, unplaced = 0;
    while (pending != 0) {
        const int leader = __ffs(pending) - 1;
        const uint64_t lslot = __shfl_sync(kFullMask, slot, leader);
        const uint64_t lmeta = __shfl_sync(kFullMask, meta, leader);
        const KeyHashes lk = shfl_hashes(k, leader, static_cast<int>(t.hashes));
        const uint8_t* key = pool + lslot + 8;

        // One pass over all levels: the key's first match, and the best free slot above the bottom.
        bool found = false, shared = false;
        uint64_t first = 0, target = 0;
        uint32_t best = ~0u;  // load << 10 | window << 5 | lane
        for (int d0 = 0, w = 0; d0 < levels; d0 += per, ++w) {
            const WindowProbe p = probe_window<true>(t, lk, key, d0, min(per, levels - d0), bottom);
            if (!found && p.match != 0) {
                found = true;
                first = __shfl_sync(kFullMask, p.slot, __ffs(p.match) - 1);
            }
            const bool m = (p.match >> lane_id()) & 1;
            shared |= __any_sync(kFullMask, m && p.slot != lslot && meta_value_offset(p.meta) == meta_value_offset(lmeta));
            const int lane = least_loaded_empty_lane(p);
            if (lane >= 0) {
                const uint32_t score = ((p.best >> 5) << 10) | (static_cast<uint32_t>(w) << 5) | (p.best & 31);
                if (score < best) {
                    best = score;
                    target = __shfl_sync(kFullMask, p.slot, lane);
                }
            }
        }
        if (found && first != lslot) {
            // A more valid copy exists (copied up before a crash, or an older duplicate): drop this one.
            if (lane_id() == leader) {
                publish_slot(pool, lslot, kEmpty);
                if (!shared) {
                    scan_retire(s, meta_block(t, lmeta));
                }
            }
            dropped |= 1u << leader;
        } else if (best == ~0u) {
            unplaced |= 1u << leader;  // stays below; the host adds a level and comes back for it
        } else {
            bool won = false;
            if (lane_id() == leader) {
                won = claim_slot(pool, target);
            }
            if (!__shfl_sync(kFullMask, won, leader)) {
                continue;  // another warp placed an item there first: probe again
            }
            write_slot_key<true>(t, pool, target, key);
            if (lane_id() == leader) {
                publish_slot(pool, target, lmeta);  // the copy is durable before the original goes
                publish_slot(pool, lslot, kEmpty);
            }
            __syncwarp();
            moved |= 1u << leader;
        }
        pending &= pending - 1;
    }
    scan_count(s, kMoved, moved);
    scan_count(s, kDuplicatesCleared, dropped);
    scan_count(s, kUnplaced, unplaced);
}

}  // namespace gphash
