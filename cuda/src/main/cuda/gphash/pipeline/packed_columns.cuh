// Host batches of values of any length (a format 3 pool's; the router's PACKED route,
// org.gphash.cuda.staging.PackedValueBatches): their values cross the link packed, back to back, each at
// its own offset, and are spread here into the device route's column of places of the value size (each
// value at the start of its place); the values read go back the same way, gathered from their places to
// the offsets the host gives from their lengths. The link then carries the values' own bytes, where a
// column of 4 KiB places carried some 30 times the bytes of values of 138 on average (bench ycsb
// --value-lengths mixed, docs/lab/2026-12-01-values-of-any-length-on-the-gpu.md).
#pragma once
#include <cstdint>
#include "../core/warp_copy.cuh"
#include "pipe_params.cuh"

namespace gphash {

// Mirrors org.gphash.cuda.runtime.KernelParams.packedColumn.
struct PackedColumn {
    uint64_t n;           // operations
    uint64_t packed;      // uint8_t[]: the values back to back
    uint64_t offsets;     // const uint64_t[n]: operation i's value at packed + offsets[i]
    uint64_t lengths;     // const uint32_t[n]: its length (0: no value)
    uint64_t column;      // uint8_t[n * value_size]: operation i's place at column + i * value_size
    uint64_t value_size;
};

// A warp per operation copies its value between the packed bytes and its place: into the place
// (Spread) or out of it. Offsets need not be aligned (lanes_copy then moves bytes, still coalesced).
template <bool Spread>
__device__ void packed_copy(const PackedColumn& a) {
    for (uint64_t i = global_warp(); i < a.n; i += global_warps()) {
        const uint32_t length = arr<const uint32_t>(a.lengths)[i];
        if (length != 0) {
            uint8_t* place = arr<uint8_t>(a.column) + i * a.value_size;
            uint8_t* at = arr<uint8_t>(a.packed) + arr<const uint64_t>(a.offsets)[i];
            if (Spread) {
                lanes_copy(place, at, length, lane_id(), kWarpSize);
            } else {
                lanes_copy(at, place, length, lane_id(), kWarpSize);
            }
        }
    }
}

}  // namespace gphash
