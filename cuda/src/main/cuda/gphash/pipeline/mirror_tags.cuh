// The HBM mirror's tag array: one 16-bit tag per slot, the top 16 bits of the slot's meta word in the
// mirror (0 EMPTY, 1 INSERT, >= 2 the item's fingerprint), bucket by bucket in global bucket order
// (candidate_order.cuh's global_bucket). A probe reads a bucket's tags (16 bytes for 8 slots, one
// sector) instead of its slots (128 bytes for 8-byte keys) and reads a slot only where its tag is the
// key's fingerprint: a miss costs a sector per candidate bucket, a hit one more.
//
// The tags are derived data, volatile like the mirror: built from the mirror's meta words when it is
// loaded, and written by the same kernels that write those words, each tag after its word (so a
// reader that sees a tag finds the word at least as new; a tag that lags its word only makes a probe
// read a slot it need not have, or miss an item published while it looked, as reading the word a
// moment earlier would).
#pragma once
#include <cstdint>
#include "../core/slot_meta.cuh"
#include "../core/table_params.cuh"
#include "index_mirror.cuh"

namespace gphash {

constexpr uint32_t kTagEmpty = 0;
constexpr uint32_t kTagInsert = 1;

// The tag a meta word leaves: its fingerprint field.
__host__ __device__ __forceinline__ uint32_t tag_of(uint64_t meta) { return static_cast<uint32_t>(meta >> 48); }

// Where slot s of global bucket x keeps its tag (mt: the mirror's TableParams).
__device__ __forceinline__ uint16_t* tag_at(const TableParams& mt, uint64_t x, int s) {
    return reinterpret_cast<uint16_t*>(mt.tags) + x * static_cast<uint64_t>(mt.slots) + static_cast<uint64_t>(s);
}

// Read past L1, as mirror words are: another SM may have just changed it.
__device__ __forceinline__ uint32_t load_tag(const TableParams& mt, uint64_t x, int s) {
    unsigned short v;
    asm volatile("ld.volatile.global.u16 %0, [%1];" : "=h"(v) : "l"(tag_at(mt, x, s)));
    return v;
}

__device__ __forceinline__ void store_tag(const TableParams& mt, uint64_t x, int s, uint32_t tag) {
    *reinterpret_cast<volatile uint16_t*>(tag_at(mt, x, s)) = static_cast<uint16_t>(tag);
}

// A new meta word for slot s of global bucket x in the mirror, then its tag.
__device__ __forceinline__ void mirror_store_meta(const TableParams& mt, uint64_t x, int s, uint64_t meta) {
    store_meta(mirror_slot_of(mt, x, s), 0, meta);
    __threadfence();
    store_tag(mt, x, s, tag_of(meta));
}

// Claims slot s of global bucket x in the mirror (EMPTY -> INSERT) and, if won, tags it INSERT, so
// that other claimers, who choose by tags, stop choosing it.
__device__ __forceinline__ bool mirror_claim(const TableParams& mt, uint64_t x, int s) {
    auto* word = reinterpret_cast<unsigned long long*>(mirror_slot_of(mt, x, s));
    if (atomicCAS(word, kEmpty, kInsertState) != kEmpty) {
        return false;
    }
    store_tag(mt, x, s, kTagInsert);
    return true;
}

// Builds the tags of the whole mirror from its meta words (after the mirror is loaded), one thread
// per slot; `buckets`: the table's buckets over all levels.
__device__ void mirror_build_tags(const TableParams& mt, uint64_t buckets) {
    const uint64_t slots = static_cast<uint64_t>(mt.slots);
    const uint64_t total = buckets * slots;
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
        const uint64_t x = i / slots;
        const int s = static_cast<int>(i % slots);
        store_tag(mt, x, s, tag_of(load_meta(mirror_slot_of(mt, x, s), 0)));
    }
}

}  // namespace gphash
