// A shard's part of a caller's batch (a sharded index, org.gphash.shard): the operations at listed
// positions of the caller's pinned columns. A chunk of them is gathered into a lane's device buffers
// before the pipeline runs it: kinds and keys from a copy of the range of the caller's columns the
// chunk spans (one DMA copy: read one by one through the mapping, they cost a fifth of a chunk's GPU
// time), values straight through the mapping (whole 128-byte lines). Its outcomes (and the values
// read, unless the read stage wrote them at their positions itself, PipeBatch::out_at) are scattered
// back to the same positions of the caller's pinned result after it: the host copies nothing of the
// part, where a split on the host copied every operation in and every value read out again.
#pragma once
#include <cstdint>
#include "../core/table_params.cuh"
#include "pipe_params.cuh"
#include "value_lanes.cuh"

namespace gphash {

// Mirrors org.gphash.cuda.runtime.KernelParams.partGather.
struct PartGather {
    uint64_t n;            // operations of the chunk
    uint64_t positions;    // const uint32_t[n], device: each operation's position in the caller's batch
    uint64_t base;         // the first position of the range kinds_from and keys_from hold
    uint64_t kinds_from;   // device: the caller's kinds and keys from position `base` on
    uint64_t keys_from;
    uint64_t values_from;  // the caller's pinned values, from position 0; 0: the chunk writes no value
    uint64_t kinds_to;     // the lane's device buffers, in chunk order
    uint64_t keys_to;
    uint64_t values_to;
    uint64_t key_size;
    uint64_t value_size;
};

// Mirrors org.gphash.cuda.runtime.KernelParams.partScatter.
struct PartScatter {
    uint64_t n;
    uint64_t positions;    // const uint32_t[n], device
    uint64_t codes_from;   // the lane's device buffers, in chunk order
    uint64_t values_from;  // 0: the chunk's values read are in place already, or it reads none
    uint64_t codes_to;     // the caller's pinned result
    uint64_t values_to;
    uint64_t value_size;
};

__device__ __forceinline__ bool carries_value(int kind) { return kind != kGet && kind != kDelete; }

// The warp's operations i0..i0+31 (those below n) one per sub-group of lanes at a time: calls
// f(j, position, tag) with operation j's position and tag (held by lane j - i0), every lane of the
// sub-group with the same values, as sub_copy wants. Every lane of the warp must call it.
template <typename F>
__device__ __forceinline__ void by_sub_group(const ValueLanes& v, uint64_t i0, uint64_t n, uint32_t position, int tag,
                                             F f) {
    for (int k = 0; k < kWarpSize; k += v.per_warp) {
        const int src = k + v.sub;
        const uint64_t p = __shfl_sync(kFullMask, position, src);
        const int t = __shfl_sync(kFullMask, tag, src);
        const uint64_t j = i0 + src;
        if (j < n) {
            f(j, p, t);
        }
    }
}

__device__ __forceinline__ void copy_key(uint8_t* to, const uint8_t* from, uint64_t key_size) {
    if (((reinterpret_cast<uintptr_t>(to) | reinterpret_cast<uintptr_t>(from) | key_size) & 7) == 0) {
        for (uint64_t w = 0; w < key_size / 8; ++w) {
            reinterpret_cast<uint64_t*>(to)[w] = reinterpret_cast<const uint64_t*>(from)[w];
        }
    } else {
        for (uint64_t b = 0; b < key_size; ++b) {
            to[b] = from[b];
        }
    }
}

// A thread per operation for its kind and key; then the warp's values, a sub-group of lanes each
// (positions ascend, so a warp's reads of the caller's columns fall close together).
__device__ void part_gather(const PartGather& a) {
    const int lane = lane_id();
    const ValueLanes v = value_lanes(a.value_size);
    const auto* positions = arr<const uint32_t>(a.positions);
    for (uint64_t i0 = global_warp() * kWarpSize; i0 < a.n; i0 += global_warps() * kWarpSize) {
        const uint64_t i = i0 + lane;
        uint32_t pos = 0;
        int kind = kGet;
        if (i < a.n) {
            pos = positions[i];
            const uint64_t in_range = pos - a.base;
            kind = arr<const uint8_t>(a.kinds_from)[in_range];
            arr<uint8_t>(a.kinds_to)[i] = static_cast<uint8_t>(kind);
            copy_key(arr<uint8_t>(a.keys_to) + i * a.key_size, arr<const uint8_t>(a.keys_from) + in_range * a.key_size,
                     a.key_size);
        }
        if (a.values_from == 0) {
            continue;
        }
        by_sub_group(v, i0, a.n, pos, kind, [&](uint64_t j, uint64_t p, int k) {
            if (carries_value(k)) {
                sub_copy(v, arr<uint8_t>(a.values_to) + j * a.value_size,
                         arr<const uint8_t>(a.values_from) + p * a.value_size, a.value_size);
            }
        });
    }
}

// A thread per operation for its outcome code; then the values of the warp's operations that found
// or replaced one, a sub-group of lanes each, written through the mapping at their positions.
__device__ void part_scatter(const PartScatter& a) {
    const int lane = lane_id();
    const ValueLanes v = value_lanes(a.value_size);
    const auto* positions = arr<const uint32_t>(a.positions);
    for (uint64_t i0 = global_warp() * kWarpSize; i0 < a.n; i0 += global_warps() * kWarpSize) {
        const uint64_t i = i0 + lane;
        uint32_t pos = 0;
        int code = kRetry;
        if (i < a.n) {
            pos = positions[i];
            code = arr<const uint8_t>(a.codes_from)[i];
            arr<uint8_t>(a.codes_to)[pos] = static_cast<uint8_t>(code);
        }
        if (a.values_from == 0) {
            continue;
        }
        by_sub_group(v, i0, a.n, pos, code & 0x7f, [&](uint64_t j, uint64_t p, int c) {
            if (c == kFound || c == kReplaced) {
                sub_copy(v, arr<uint8_t>(a.values_to) + p * a.value_size,
                         arr<const uint8_t>(a.values_from) + j * a.value_size, a.value_size);
            }
        });
    }
}

}  // namespace gphash
