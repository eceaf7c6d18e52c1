// Lanes of a warp split into sub-groups, one value each: 8-byte words per lane, as many lanes as a
// value has words (a power of two, at most a warp), so a 128-byte value is 16 lanes and a warp moves
// two values per step; values whose size or alignment is not a multiple of 8 move byte by byte.
#pragma once
#include <cstdint>
#include "../core/table_params.cuh"
#include "../core/slot_meta_format.cuh"
#include "../core/warp_copy.cuh"

namespace gphash {

struct ValueLanes {
    int width;     // lanes per value
    int per_warp;  // values per warp step
    int sub;       // this lane's sub-group
    int index;     // this lane's index in its sub-group
    int leader;    // the sub-group's first lane
};

__device__ __forceinline__ ValueLanes value_lanes(uint64_t value_size) {
    const uint64_t words = (value_size + 7) / 8;
    int width = 1;
    while (width < kWarpSize && static_cast<uint64_t>(width) < words) {
        width <<= 1;
    }
    if ((value_size & 7) != 0) {
        width = kWarpSize;
    }
    const int lane = lane_id();
    return ValueLanes{width, kWarpSize / width, lane / width, lane % width, (lane / width) * width};
}

// The lanes for values of many lengths up to `value_size` (format 3, a batch with lengths): sub-groups
// of 16 lanes, a 128-byte step, so a warp moves two short values at once where lanes sized for the
// value size (4 KiB: the whole warp, one value a step) would leave most lanes idle on a value of the
// usual 130 bytes; a longer value takes more steps of its sub-group.
__device__ __forceinline__ ValueLanes value_lanes_for(uint64_t value_size, bool lengths_vary) {
    return value_lanes(lengths_vary && value_size > 128 && (value_size & 7) == 0 ? 128 : value_size);
}

// Copies one value with the lanes of a sub-group (each lane calls with the same pointers).
__device__ __forceinline__ void sub_copy(const ValueLanes& v, uint8_t* to, const uint8_t* from, uint64_t bytes) {
    lanes_copy(to, from, bytes, v.index, v.width);
}

// sub_copy of `word`, then `bytes` from `src`, into `to` (8-byte aligned): a framed value's header and
// value as one run of words.
__device__ __forceinline__ void sub_copy_after_word(const ValueLanes& v, uint8_t* to, uint64_t word, const uint8_t* from,
                                                    uint64_t bytes) {
    lanes_copy_after_word(to, word, from, bytes, v.index, v.width);
}

// Copies a value of `length` bytes (at most `width`) with the lanes of a sub-group, then zeros up to
// `width`: a value shorter than the place it goes to (format 3's values of any length read into a
// column of the value size) leaves no stale bytes behind it.
__device__ __forceinline__ void sub_copy_padded(const ValueLanes& v, uint8_t* to, const uint8_t* from, uint64_t length,
                                                uint64_t width) {
    lanes_copy(to, from, length, v.index, v.width);
    for (uint64_t i = length + v.index; i < width; i += v.width) {
        to[i] = 0;
    }
}

// A value read into its place: padded with zeros where the batch takes no lengths back (a column of the
// value size), as long as it is where it does.
__device__ __forceinline__ void sub_copy_read(const ValueLanes& v, uint8_t* to, const uint8_t* from, uint64_t length,
                                              uint64_t width, bool lengths_back) {
    if (lengths_back) {
        lanes_copy(to, from, length, v.index, v.width);
    } else {
        sub_copy_padded(v, to, from, length, width);
    }
}

// A value from the pool into `to`, a place of the value size, by the lanes of a sub-group (each lane
// calls with the same word): the item's word `meta` names its block. Returns its length. Where a place
// ends on a whole word, lanes_read_block: the block's first words and its header in one round trip of
// the link (reading the header first was one more, and the lanes' words one after another more still);
// otherwise bytes after the header. With `pad`, zeros after the value to the place's end.
__device__ __forceinline__ uint64_t sub_read_value(const ValueLanes& v, const TableParams& t, const uint8_t* pool,
                                                   uint64_t meta, uint8_t* to, bool pad) {
    const uint64_t vs = static_cast<uint64_t>(t.value_size);
    if ((vs & 7) != 0) {
        const uint64_t length = meta_value_length(t, pool, meta);
        if (pad) {
            sub_copy_padded(v, to, pool + meta_value_at(t, meta), length, vs);
        } else {
            lanes_copy(to, pool + meta_value_at(t, meta), length, v.index, v.width);
        }
        return length;
    }
    uint64_t block_words = vs / 8;
    bool framed = false;
    if (t.format == kFormat3) {
        const int c = static_cast<int>(meta_v3_class(meta));
        block_words = value_block_bytes(c) / 8;
        framed = !value_class_is_bare(c);
    }
    return lanes_read_block(to, pool + meta_block(t, meta), block_words, framed, block_words * 8, vs, vs, pad, v.index,
                            v.width);
}

// A pointer broadcast from lane `src` (all lanes call).
template <typename T>
__device__ __forceinline__ T* shfl_pointer(T* p, int src) {
    return reinterpret_cast<T*>(__shfl_sync(kFullMask, reinterpret_cast<unsigned long long>(p), src));
}

}  // namespace gphash
