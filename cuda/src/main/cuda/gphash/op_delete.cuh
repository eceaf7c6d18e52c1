// DELETE: one CAS of the valid item's meta word to EMPTY, fence; retire the block; drop duplicates.
#pragma once
#include "op_common.cuh"

namespace gphash {

__device__ __forceinline__ uint8_t op_delete(OpContext& c) {
    for (;;) {
        const WindowProbe p = probe_op(c);
        if (p.match == 0) {
            return kNotFound;
        }
        const int valid = __ffs(p.match) - 1;
        bool won = false;
        if (lane_id() == valid) {
            won = swap_slot(c.pool, p.slot, p.meta, kEmpty);
        }
        if (!__shfl_sync(kFullMask, won, valid)) {
            continue;
        }
        mirror_lane(c, p, valid);
        const uint32_t shared = lanes_sharing_value(p, 1u << valid);
        if (lane_id() == valid) {
            count(c.b, kItemsRemoved, 1);
            if (shared == 0) {
                retire_block(c.b, meta_value_offset(p.meta));
            }
        }
        remove_duplicates(c, p, valid);
        return kDeleted;
    }
}

}  // namespace gphash
