// Warp-cooperative copies of values and keys: 32 lanes move consecutive 8-byte words, so a 128-byte
// value is one coalesced transaction.
#pragma once
#include <cstdint>
#include "key_hash.cuh"
#include "table_params.cuh"
#include "value_block_header.cuh"

namespace gphash {

// Words each lane holds in registers per step of a copy: a step issues all its loads before any of
// its stores. A load from host memory waits a round trip of the link (about a microsecond), and the
// compiler cannot move a load above a store that may alias it, so a loop that stored each word before
// loading the next paid a round trip per word a lane moved (a 146-byte value with 16 lanes: three).
constexpr int kCopyWordsInFlight = 4;

// Lanes `index`, `index + width`, ... of a group copy `words` 8-byte words, kCopyWordsInFlight per
// lane a step. Reads go past L1 (a pool value or a cache entry another SM may have written).
__device__ __forceinline__ void lanes_copy_words(unsigned long long* d, const unsigned long long* s, uint64_t words,
                                                 uint64_t index, uint64_t width) {
    const uint64_t step = width * kCopyWordsInFlight;
    for (uint64_t base = index; base < words; base += step) {
        unsigned long long w[kCopyWordsInFlight];
#pragma unroll
        for (int k = 0; k < kCopyWordsInFlight; ++k) {
            const uint64_t i = base + k * width;
            w[k] = i < words ? __ldcg(s + i) : 0ull;
        }
#pragma unroll
        for (int k = 0; k < kCopyWordsInFlight; ++k) {
            const uint64_t i = base + k * width;
            if (i < words) {
                __stcg(d + i, w[k]);
            }
        }
    }
}

// Lanes `index`, `index + width`, ... of a group copy `bytes` from `src` to `dst`: 8-byte words where
// both are aligned (the last few bytes of a length that is no multiple of 8 one by one), else bytes.
// No sync: a warp's callers sync, a sub-group's do not (value_lanes.cuh).
__device__ __forceinline__ void lanes_copy(uint8_t* dst, const uint8_t* src, uint64_t bytes, uint64_t index,
                                           uint64_t width) {
    if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 7) == 0) {
        lanes_copy_words(reinterpret_cast<unsigned long long*>(dst), reinterpret_cast<const unsigned long long*>(src),
                         bytes / 8, index, width);
        // The bytes of a length that is no multiple of 8 (format 3's values of any length).
        for (uint64_t i = (bytes & ~7ull) + index; i < bytes; i += width) {
            dst[i] = __ldcg(src + i);
        }
    } else {
        for (uint64_t i = index; i < bytes; i += width) {
            dst[i] = __ldcg(src + i);
        }
    }
}

// Word i of a value of `bytes` bytes at `src`: the bytes past its end read as zeros, and never read.
__device__ __forceinline__ unsigned long long value_word(const uint8_t* src, uint64_t bytes, uint64_t i, bool aligned) {
    const uint64_t at = 8 * i;
    if (aligned && at + 8 <= bytes) {
        return __ldcg(reinterpret_cast<const unsigned long long*>(src) + i);
    }
    unsigned long long w = 0;
#pragma unroll
    for (int b = 0; b < 8; ++b) {
        if (at + b < bytes) {
            w |= static_cast<unsigned long long>(__ldcg(src + at + b)) << (8 * b);
        }
    }
    return w;
}

// Lanes `index`, `index + width`, ... of a group write a framed value's block at `dst` (8-byte aligned):
// `word` (its header), then `bytes` from `src`, as one run of whole words, kCopyWordsInFlight per lane a
// step. The header stored on its own was one more write of the block's first line on the link
// (docs/lab/2026-11-30-format-3-on-the-gpu.md), and a value's last bytes stored one by one were a
// write of part of a word; a block holds its header and value and ends on a whole word (its size is a
// multiple of 16), so the last word is stored whole, zeros after the value.
__device__ __forceinline__ void lanes_copy_after_word(uint8_t* dst, uint64_t word, const uint8_t* src, uint64_t bytes,
                                                      uint64_t index, uint64_t width) {
    auto* d = reinterpret_cast<unsigned long long*>(dst);
    const bool aligned = (reinterpret_cast<uintptr_t>(src) & 7) == 0;
    const uint64_t words = 1 + (bytes + 7) / 8;
    const uint64_t step = width * kCopyWordsInFlight;
    for (uint64_t base = index; base < words; base += step) {
        unsigned long long w[kCopyWordsInFlight];
#pragma unroll
        for (int k = 0; k < kCopyWordsInFlight; ++k) {
            const uint64_t i = base + k * width;
            w[k] = i == 0 ? static_cast<unsigned long long>(word) : i < words ? value_word(src, bytes, i - 1, aligned) : 0ull;
        }
#pragma unroll
        for (int k = 0; k < kCopyWordsInFlight; ++k) {
            const uint64_t i = base + k * width;
            if (i < words) {
                __stcg(d + i, w[k]);
            }
        }
    }
}

// Word w of a value read into a place, `length` bytes long: its bytes past the value's end zeroed.
__device__ __forceinline__ unsigned long long value_word_masked(unsigned long long w, uint64_t i, uint64_t length) {
    const uint64_t left = length - 8 * i;
    return left >= 8 ? w : w & ((1ull << (8 * left)) - 1);
}

// Lanes `index`, `index + width`, ... of a group read a value from its block in the pool into `dst`, a
// place of `room` bytes (both 8-byte aligned, `room` a multiple of 8), and return its length (the same
// in every lane): a framed block's header's, at most `max_length` and what the block holds, else
// `bare_length`. Every lane loads its words of the block's first step, the header among them, before
// the length is known (words of the block only, `block_words` of them), so a value of up to
// width x kCopyWordsInFlight words costs one round trip of the link where reading its header first
// cost one more. Every lane of the group calls together (the header comes by a shuffle). The last word
// is stored whole, its bytes past the value zeroed; with `pad`, zeros after it to the place's end (a
// column of the value size takes no stale bytes).
__device__ __forceinline__ uint64_t lanes_read_block(uint8_t* dst, const uint8_t* block, uint64_t block_words, bool framed,
                                                     uint64_t bare_length, uint64_t max_length, uint64_t room, bool pad,
                                                     uint64_t index, uint64_t width) {
    const auto* s = reinterpret_cast<const unsigned long long*>(block);
    auto* d = reinterpret_cast<unsigned long long*>(dst);
    const uint64_t skip = framed ? 1 : 0;
    const uint64_t step = width * kCopyWordsInFlight;
    unsigned long long w[kCopyWordsInFlight];
#pragma unroll
    for (int k = 0; k < kCopyWordsInFlight; ++k) {
        const uint64_t i = index + k * width;
        w[k] = i < block_words ? __ldcg(s + i) : 0ull;
    }
    // The header is the group's first lane's first word: a load of its own was one more access of the
    // link per value.
    const int first = lane_id() - static_cast<int>(index);
    const unsigned group = width >= kWarpSize ? kFullMask : ((1u << width) - 1) << first;
    const unsigned long long header = __shfl_sync(group, w[0], first);
    uint64_t length = bare_length;
    if (framed) {
        length = value_header_length(header);
        length = length < max_length ? length : max_length;
        const uint64_t holds = (block_words - 1) * 8;
        length = length < holds ? length : holds;
    }
    const uint64_t words = skip + (length + 7) / 8;
    for (uint64_t base = index;;) {
#pragma unroll
        for (int k = 0; k < kCopyWordsInFlight; ++k) {
            const uint64_t i = base + k * width;
            if (i >= skip && i < words) {
                d[i - skip] = value_word_masked(w[k], i - skip, length);
            }
        }
        base += step;
        if (base >= words) {
            break;
        }
#pragma unroll
        for (int k = 0; k < kCopyWordsInFlight; ++k) {
            const uint64_t i = base + k * width;
            w[k] = i < words ? __ldcg(s + i) : 0ull;
        }
    }
    if (pad) {
        for (uint64_t i = (length + 7) / 8 + index; i < room / 8; i += width) {
            d[i] = 0;
        }
    }
    return length;
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
