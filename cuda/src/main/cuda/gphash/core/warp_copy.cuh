// Warp-cooperative copies of values and keys: 32 lanes move consecutive 8-byte words, so a 128-byte
// value is one coalesced transaction.
#pragma once
#include <cstdint>
#include "key_hash.cuh"
#include "table_params.cuh"

namespace gphash {

// Lanes `index`, `index + width`, ... of a group copy `bytes` from `src` to `dst`: 8-byte words where
// both are aligned (the last few bytes of a length that is no multiple of 8 one by one), else bytes. Reads go past L1 (a pool value or a
// cache entry another SM may have written). No sync: a warp's callers sync, a sub-group's do not
// (value_lanes.cuh).
__device__ __forceinline__ void lanes_copy(uint8_t* dst, const uint8_t* src, uint64_t bytes, uint64_t index,
                                           uint64_t width) {
    if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 7) == 0) {
        // Whole words, then the bytes of a length that is no multiple of 8 (format 3's values of any length).
        auto* d = reinterpret_cast<unsigned long long*>(dst);
        const auto* s = reinterpret_cast<const unsigned long long*>(src);
        for (uint64_t w = index; w < bytes / 8; w += width) {
            __stcg(d + w, __ldcg(s + w));
        }
        for (uint64_t i = (bytes & ~7ull) + index; i < bytes; i += width) {
            dst[i] = __ldcg(src + i);
        }
    } else {
        for (uint64_t i = index; i < bytes; i += width) {
            dst[i] = __ldcg(src + i);
        }
    }
}

// lanes_copy of `word`, then `bytes` from `src`, into `dst` (8-byte aligned): a framed value's header
// and value, one block, stored as one run of words, since the header stored on its own was one more
// write of the block's first line on the link (docs/lab/2026-11-30-format-3-on-the-gpu.md).
__device__ __forceinline__ void lanes_copy_after_word(uint8_t* dst, uint64_t word, const uint8_t* src, uint64_t bytes,
                                                      uint64_t index, uint64_t width) {
    auto* d = reinterpret_cast<unsigned long long*>(dst);
    if ((reinterpret_cast<uintptr_t>(src) & 7) == 0) {
        const auto* s = reinterpret_cast<const unsigned long long*>(src);
        for (uint64_t w = index; w <= bytes / 8; w += width) {
            __stcg(d + w, w == 0 ? static_cast<unsigned long long>(word) : __ldcg(s + w - 1));
        }
        for (uint64_t i = (bytes & ~7ull) + index; i < bytes; i += width) {
            dst[8 + i] = __ldcg(src + i);
        }
    } else {
        if (index == 0) {
            __stcg(d, static_cast<unsigned long long>(word));
        }
        for (uint64_t i = index; i < bytes; i += width) {
            dst[8 + i] = __ldcg(src + i);
        }
    }
}

// The whole warp copies a value (32 lanes, consecutive words).
__device__ __forceinline__ void warp_copy(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
    lanes_copy(dst, src, bytes, lane_id(), kWarpSize);
    __syncwarp();
}

// The whole warp copies a value of `length` bytes (at most `width`) and zeros the rest of its place:
// a format 3 value shorter than the value size read into a place of the value size (a cache entry, a
// batch's column without lengths) leaves no stale bytes behind it, and reads nothing past its block.
__device__ __forceinline__ void warp_copy_padded(uint8_t* dst, const uint8_t* src, uint64_t length, uint64_t width) {
    lanes_copy(dst, src, length, lane_id(), kWarpSize);
    for (uint64_t i = length + lane_id(); i < width; i += kWarpSize) {
        dst[i] = 0;
    }
    __syncwarp();
}

// The whole warp stores `word` and then a value: a framed value's block.
__device__ __forceinline__ void warp_copy_after_word(uint8_t* dst, uint64_t word, const uint8_t* src, uint64_t bytes) {
    lanes_copy_after_word(dst, word, src, bytes, lane_id(), kWarpSize);
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
