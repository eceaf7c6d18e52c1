// A slot's meta word and its value block by the pool's format (TableParams::format), so that every
// kernel takes both formats through one code path: format 2's word (slot_meta.cuh) names the value's
// bytes; format 3's (slot_meta_v3.cuh) names a block of a class: a framed class's first 8 bytes are the
// value's header (value_block_header.cuh), the value after it; a bare class's block is the value alone
// (a value size that is a block size, as 128 is). The branch is on a field every thread of a launch
// reads alike, so it never diverges. TableParams::value_class is the class of a value of the pool's
// value size; a value of another length takes the class value_class_for gives it (device batches with
// lengths, issue 53 step 3b). Host and device alike: format3_check.cu holds it to the Java side's
// MetaFormat and ValueFormat.
#pragma once
#include <cstdint>

#include "slot_meta.cuh"
#include "slot_meta_v3.cuh"
#include "table_params.cuh"
#include "value_block_header.cuh"

namespace gphash {

constexpr int64_t kFormat3 = 3;

// The pool offset of the block the item's word names (what the heap takes and frees).
__host__ __device__ __forceinline__ uint64_t meta_block(const TableParams& t, uint64_t meta) {
    return t.format == kFormat3 ? meta_v3_value_offset(meta) : meta_value_offset(meta);
}

// Whether a block holds a header before its value (format 3's pool class is framed).
__host__ __device__ __forceinline__ bool values_framed(const TableParams& t) {
    return t.format == kFormat3 && !value_class_is_bare(static_cast<int>(t.value_class));
}

// The pool offset of the value's first byte, from the item's word: after the header where the word's
// class is framed (format 3's values of any length, issue 53 step 3b), at the block's start where it
// is bare (the pool's class, where values of the value size go bare) and in format 2.
__host__ __device__ __forceinline__ uint64_t meta_value_at(const TableParams& t, uint64_t meta) {
    if (t.format != kFormat3) {
        return meta_value_offset(meta);
    }
    const uint64_t block = meta_v3_value_offset(meta);
    return value_class_is_bare(static_cast<int>(meta_v3_class(meta))) ? block : block + kValueHeaderBytes;
}

// The length of the item's value: the value size in format 2, a bare block's bytes (no read: the pool's
// class where values of the value size go bare, as 128-byte ones do), else its header's length read
// from the pool (a framed class holds several lengths: 591 and 600 bytes share one), never more than
// the value size (a header is whole before its word is published).
__host__ __device__ __forceinline__ uint32_t meta_value_length(const TableParams& t, const uint8_t* pool, uint64_t meta) {
    if (t.format != kFormat3) {
        return static_cast<uint32_t>(t.value_size);
    }
    const int c = static_cast<int>(meta_v3_class(meta));
    if (value_class_is_bare(c)) {
        return value_block_bytes(c);
    }
    const uint64_t header = *reinterpret_cast<const volatile uint64_t*>(pool + meta_v3_value_offset(meta));
    const uint32_t length = value_header_length(header);
    return length < static_cast<uint32_t>(t.value_size) ? length : static_cast<uint32_t>(t.value_size);
}

// The class a value of `length` bytes takes, as org.gphash.format.ValueFormat#classOf gives it: the
// pool's class for the value size (bare where the pool's is), else the least framed class that holds
// it and its header. Format 2: the pool's (every value has the value size).
__host__ __device__ __forceinline__ int value_class_for(const TableParams& t, uint32_t length) {
    if (t.format != kFormat3 || length == static_cast<uint64_t>(t.value_size)) {
        return static_cast<int>(t.value_class);
    }
    return value_class_of(length);
}

// The word that publishes an item of fingerprint `fp` whose value is in `block` of class `c` (format
// 3; format 2 has no class).
__host__ __device__ __forceinline__ uint64_t meta_publish_class(const TableParams& t, uint32_t fp, int c, uint64_t block) {
    return t.format == kFormat3 ? meta_v3_make(fp, static_cast<uint32_t>(c), block) : meta_make(fp, block);
}

// The word that publishes an item of fingerprint `fp` whose value is in `block`.
__host__ __device__ __forceinline__ uint64_t meta_publish(const TableParams& t, uint32_t fp, uint64_t block) {
    return t.format == kFormat3 ? meta_v3_make(fp, static_cast<uint32_t>(t.value_class), block) : meta_make(fp, block);
}

// Whether an insert publishes key and word in one store (format 3: no INSERT state in the pool's slot,
// a word over a key not yet whole is torn and recovery clears it; format 2 claims with INSERT first).
__host__ __device__ __forceinline__ bool publishes_key_with_word(const TableParams& t) { return t.format == kFormat3; }

// Format 3: the header of a value of value_size bytes (no item checksum: the GPU engine refuses pools
// that keep them), stored with the value's words in one run (warp_copy_after_word, sub_copy_after_word).
__host__ __device__ __forceinline__ uint64_t pool_value_header(const TableParams& t) {
    return value_header_make(static_cast<uint32_t>(t.value_size), 0);
}

}  // namespace gphash
