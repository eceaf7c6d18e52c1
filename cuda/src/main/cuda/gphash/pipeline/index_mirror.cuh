// The HBM index mirror: every level of the pool's table copied into GPU memory, slot for slot
// (meta word, key), so that probes never cross PCIe. Kernels see it through a TableParams whose
// `pool` is 0 and whose level offsets are the device addresses of the copies: probe_window then
// reads the mirror exactly as it reads the pool. The mirror is volatile (loaded from the pool when
// the engine opens it and after every resize) and exact: the pipeline writes the pool first and the
// mirror after, and is the pool's only writer while the engine holds it.
#pragma once
#include <cstdint>
#include "../cache/cache_params.cuh"
#include "../core/table_params.cuh"

namespace gphash {

// Level (depth) and bucket number of global bucket x (numbered across levels, top level first).
__device__ __forceinline__ int depth_of_bucket(const TableParams& t, uint64_t x, uint64_t& b) {
    uint64_t base = 0;
    for (int d = 0; d < t.level_count; ++d) {
        const uint64_t size = 1ull << (t.top_log2 - d);
        if (x < base + size) {
            b = x - base;
            return d;
        }
        base += size;
    }
    b = 0;
    return 0;  // unreachable for x < total buckets
}

// Pool offset of slot s of global bucket x.
__device__ __forceinline__ uint64_t pool_slot_of(const TableParams& t, uint64_t x, int s) {
    uint64_t b;
    const int d = depth_of_bucket(t, x, b);
    return t.level_offset[d] + b * static_cast<uint64_t>(t.bucket_size) + static_cast<uint64_t>(s) * t.slot_size;
}

// Device address of the mirror's copy of slot s of global bucket x (mt: the mirror's TableParams).
__device__ __forceinline__ uint8_t* mirror_slot_of(const TableParams& mt, uint64_t x, int s) {
    return reinterpret_cast<uint8_t*>(pool_slot_of(mt, x, s));
}

// Slot index (within its bucket) of pool slot `slot` of global bucket x.
__device__ __forceinline__ int slot_index_of(const TableParams& t, uint64_t x, uint64_t slot) {
    uint64_t b;
    const int d = depth_of_bucket(t, x, b);
    return static_cast<int>((slot - t.level_offset[d] - b * static_cast<uint64_t>(t.bucket_size)) / t.slot_size);
}

}  // namespace gphash
