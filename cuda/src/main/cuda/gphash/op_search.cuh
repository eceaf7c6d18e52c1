// GET: probe once; copy the valid item's value.
#pragma once
#include "op_common.cuh"

namespace gphash {

__device__ __forceinline__ uint8_t op_get(OpContext& c) {
    const WindowProbe p = probe_op(c);
    if (p.match == 0) {
        return kNotFound;
    }
    const int valid = __ffs(p.match) - 1;
    const uint64_t value = meta_value_offset(__shfl_sync(kFullMask, p.meta, valid));
    // The block cannot be reused under us: blocks retired by this kernel are freed after it ends.
    warp_copy(reinterpret_cast<uint8_t*>(c.b.out) + c.op * c.t.value_size, c.pool + value,
              static_cast<uint64_t>(c.t.value_size));
    return kFound;
}

}  // namespace gphash
