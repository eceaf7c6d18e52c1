// INSERT and PUT, in the CPU engine's order (docs/DESIGN.md): value to a fresh block, fence; CAS
// the least-loaded candidate slot EMPTY -> INSERT; key, fence; meta (fingerprint, block), fence;
// then probe again to settle a race with another insert of the key (§3.2.2).
#pragma once
#include "op_common.cuh"
#include "op_update.cuh"

namespace gphash {

__device__ __forceinline__ uint8_t op_insert(OpContext& c, bool upsert) {
    for (;;) {
        const WindowProbe p = probe_op(c);
        if (p.match != 0) {
            const int valid = __ffs(p.match) - 1;
            if (upsert) {
                const uint8_t r = swap_value(c, p, valid, kUpdated);
                if (r != kRetry) {
                    return r;
                }
                continue;
            }
            remove_duplicates(c, p, valid);
            return kExists;
        }
        const int target = least_loaded_empty_lane(p);
        if (target < 0) {
            if (lane_id() == 0) {
                count(c.b, kNeedResizeCount, 1);
            }
            return kNeedResize;
        }
        stage_value(c);
        const uint64_t slot = __shfl_sync(kFullMask, p.slot, target);
        bool won = false;
        if (lane_id() == target) {
            won = claim_slot(c.pool, slot);
        }
        if (!__shfl_sync(kFullMask, won, target)) {
            continue;  // another warp took the slot: look again
        }
        write_slot_key<false>(c.t, c.pool, slot, c.key);
        if (lane_id() == 0) {
            publish_slot(c.pool, slot, meta_publish(c.t, c.k.fp, c.block));
            count(c.b, kItemsAdded, 1);
        }
        __syncwarp();
        c.consumed = true;
        mirror_lane(c, p, target);

        const WindowProbe after = probe_pool(c);
        const int valid = after.match != 0 ? __ffs(after.match) - 1 : -1;
        const bool ours = valid >= 0 && __shfl_sync(kFullMask, after.slot, valid) == slot;
        if (valid >= 0) {
            // Either ours is valid and other copies go, or a racing insert's copy is valid and ours goes.
            remove_duplicates(c, after, valid);
        }
        return (valid < 0 || ours || upsert) ? kInserted : kExists;
    }
}

}  // namespace gphash
