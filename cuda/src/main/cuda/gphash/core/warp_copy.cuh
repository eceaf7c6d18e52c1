// Warp-cooperative copies of values and keys: 32 lanes move consecutive 8-byte words, so a 128-byte
// value is one coalesced transaction.
#pragma once
#include <cstdint>
#include "key_hash.cuh"
#include "table_params.cuh"

namespace gphash {

__device__ __forceinline__ void warp_copy(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
    const int lane = lane_id();
    const bool words = ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | bytes) & 7) == 0;
    if (words) {
        auto* d = reinterpret_cast<unsigned long long*>(dst);
        auto* s = reinterpret_cast<const unsigned long long*>(src);
        for (uint64_t w = lane; w < bytes / 8; w += kWarpSize) {
            __stcg(d + w, __ldcg(s + w));
        }
    } else {
        for (uint64_t i = lane; i < bytes; i += kWarpSize) {
            dst[i] = __ldcg(src + i);
        }
    }
    __syncwarp();
}

// `word`, then `bytes` from `src`, into `dst` (8-byte aligned): format 3's value header and value, one
// block, stored as one run of words, since the header stored on its own was one more write of the block's
// first line on the link (docs/lab/2026-11-30-format-3-on-the-gpu.md).
__device__ __forceinline__ void warp_copy_after_word(uint8_t* dst, uint64_t word, const uint8_t* src, uint64_t bytes) {
    const int lane = lane_id();
    auto* d = reinterpret_cast<unsigned long long*>(dst);
    if (((reinterpret_cast<uintptr_t>(src) | bytes) & 7) == 0) {
        const auto* s = reinterpret_cast<const unsigned long long*>(src);
        for (uint64_t w = lane; w <= bytes / 8; w += kWarpSize) {
            __stcg(d + w, w == 0 ? static_cast<unsigned long long>(word) : __ldcg(s + w - 1));
        }
    } else {
        if (lane == 0) {
            __stcg(d, static_cast<unsigned long long>(word));
        }
        for (uint64_t i = lane; i < bytes; i += kWarpSize) {
            dst[8 + i] = __ldcg(src + i);
        }
    }
    __syncwarp();
}

// Writes a key into a slot's key area as key_stride bytes: the key, then zero padding.
template <bool QueryInPool>
__device__ __forceinline__ void warp_store_key(const TableParams& t, uint8_t* slot_key, const uint8_t* key) {
    const int lane = lane_id();
    const int ks = static_cast<int>(t.key_size);
    for (int w = lane; w < t.key_stride / 8; w += kWarpSize) {
        const uint64_t x = QueryInPool ? pool_key_word(key, w, ks) : key_word(key, w, ks);
        __stcg(reinterpret_cast<unsigned long long*>(slot_key) + w, static_cast<unsigned long long>(x));
    }
    __syncwarp();
}

}  // namespace gphash
