// GET: probe once; copy the valid item's value, from the cache when its bucket is cached (no pool
// access at all on a hit) and from the pool otherwise.
#pragma once
#include "op_common.cuh"

namespace gphash {

__device__ __forceinline__ uint8_t op_get(OpContext& c) {
    const WindowProbe p = probe_op(c, true);
    if (p.match == 0) {
        release_probe(c.cache, p);
        return kNotFound;
    }
    const int valid = __ffs(p.match) - 1;
    const uint64_t meta = __shfl_sync(kFullMask, p.meta, valid);
    const int entry = __shfl_sync(kFullMask, p.entry, valid);
    const uint64_t vs = static_cast<uint64_t>(c.t.value_size);
    uint8_t* out = reinterpret_cast<uint8_t*>(c.b.out) + c.op * vs;
    bool copied = false;
    if (entry >= 0) {
        // A mirror may rewrite the cached slot meanwhile: the value counts only if the meta word
        // reads the same after it (a mirror marks the slot busy before changing any byte).
        const uint8_t* copy = cached_slot(c.t, *c.cache, static_cast<uint32_t>(entry), valid % static_cast<int>(c.t.slots));
        __threadfence();
        warp_copy(out, copy + cached_value_offset(c.t), vs);
        __threadfence();
        uint64_t after = lane_id() == 0 ? load_meta(copy, 0) : 0;
        copied = __shfl_sync(kFullMask, after, 0) == meta;
    }
    release_probe(c.cache, p);
    if (!copied) {
        // The block cannot be reused under us: blocks retired by this kernel are freed after it ends.
        warp_copy_padded(out, c.pool + meta_value_at(c.t, meta), meta_value_length(c.t, c.pool, meta), vs);
    }
    return kFound;
}

}  // namespace gphash
