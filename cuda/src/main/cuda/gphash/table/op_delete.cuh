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
        if (!replace_valid_item(c, p, valid, p.meta, kEmpty)) {
            continue;
        }
        if (lane_id() == valid) {
            count(c.b, kItemsRemoved, 1);
        }
        remove_duplicates(c, p, valid);
        return kDeleted;
    }
}

}  // namespace gphash
