// The warp as every kernel sees it: its size, the full-warp mask, and where a thread stands in its
// warp. One place for these, so that no kernel works the lane out by hand.
#pragma once
#include <cstdint>

namespace gphash {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// This thread's lane: 0 to kWarpSize - 1 (blocks are whole warps).
__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) & (kWarpSize - 1); }

// Lanes below this one, as a mask.
__device__ __forceinline__ uint32_t lanes_below() { return (1u << lane_id()) - 1; }

}  // namespace gphash
