// Where blocks start in a format 3 segment, as org.gphash.table.SegmentHeap numbers them: 64 KiB
// segments, a bit per 16-byte unit, block k of a class at unit k * block / 16 (the close record's
// bitmap, which the GPU's heap keeps: heap_segments.cuh). Host and device: format3_check.cu holds it to
// the Java side.
#pragma once
#include <cstdint>

namespace gphash {

constexpr uint64_t kSegmentBytes = 65536;
constexpr uint64_t kHeapUnitBytes = 16;
// Words of the units' bitmap a segment has: kSegmentBytes / kHeapUnitBytes / 64 (two a lane of a warp).
constexpr uint32_t kSegmentWords = 64;

// The bits of unit word w (0 to 63) of a segment where its blocks 0 to blocks - 1 start, each
// `units` 16-byte units long.
__host__ __device__ __forceinline__ uint64_t seg_start_mask(uint32_t w, uint32_t units, uint32_t blocks) {
    const uint32_t lo = w * 64;
    uint64_t mask = 0;
    for (uint32_t k = (lo + units - 1) / units, u = k * units; u < lo + 64 && k < blocks; u += units, ++k) {
        mask |= 1ull << (u - lo);
    }
    return mask;
}

}  // namespace gphash
