// UPDATE, READ_MODIFY_WRITE and the update half of PUT: write the new value to a fresh block, then
// one CAS of the valid item's meta word from (fp, old offset) to (fp, new offset); retire the old block.
#pragma once
#include "op_common.cuh"

namespace gphash {

// Points the valid item of `p` (lane `valid`) at the operation's block. kRetry if the slot changed.
__device__ __forceinline__ uint8_t swap_value(OpContext& c, const WindowProbe& p, int valid, uint8_t done) {
    stage_value(c);
    const uint64_t old = __shfl_sync(kFullMask, p.meta, valid);
    if (!replace_valid_item(c, p, valid, old, meta_publish(c.t, meta_fingerprint(old), c.block))) {
        return kRetry;
    }
    c.consumed = true;
    remove_duplicates(c, p, valid);
    return done;
}

// UPDATE (copy_previous false) or READ_MODIFY_WRITE (true).
__device__ __forceinline__ uint8_t op_update(OpContext& c, bool copy_previous) {
    for (;;) {
        const WindowProbe p = probe_op(c);
        if (p.match == 0) {
            return kNotFound;
        }
        const int valid = __ffs(p.match) - 1;
        if (copy_previous) {
            // Exactly the value replaced: the CAS below fails if the slot moved on since this read.
            const uint64_t meta = __shfl_sync(kFullMask, p.meta, valid);
            warp_copy_padded(reinterpret_cast<uint8_t*>(c.b.out) + c.op * c.t.value_size, c.pool + meta_value_at(c.t, meta),
                             meta_value_length(c.t, c.pool, meta), static_cast<uint64_t>(c.t.value_size));
        }
        const uint8_t r = swap_value(c, p, valid, copy_previous ? kReplaced : kUpdated);
        if (r != kRetry) {
            return r;
        }
    }
}

}  // namespace gphash
