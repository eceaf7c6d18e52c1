// The slot protocol (docs/DESIGN.md, "Operations"), written once: the steps every writer of a pool
// slot takes, in the order crash consistency relies on. A value is durable before the slot that
// publishes it; an insert's slot goes EMPTY -> INSERT (claimed) -> key written and durable -> meta
// word (fingerprint, value offset) published; an update or delete is one meta-word change. Each
// step ends with the persist fence, where the CPU engine persists.
//
// Two kinds of caller: warps racing on the pool itself (the per-operation kernels, rehash), which
// claim and change slots by CAS; and the v2 pipeline, whose decisions are made in the HBM mirror
// (the engine is then the pool's only writer), so the pool receives the same states by plain stores.
#pragma once
#include <cstdint>
#include "../core/key_hash.cuh"
#include "../core/slot_meta.cuh"
#include "../core/slot_meta_format.cuh"
#include "../core/table_params.cuh"
#include "../core/warp_copy.cuh"

namespace gphash {

// Value: the whole warp writes `bytes` into block `block` (format 3: its header, then the value), then
// fences, before any slot refers to it.
__device__ __forceinline__ void write_value_block(const TableParams& t, uint8_t* pool, uint64_t block, const uint8_t* src,
                                                  uint64_t bytes) {
    if (values_framed(t)) {
        warp_copy_after_word(pool + block, pool_value_header(t), src, bytes);
    } else {
        warp_copy(pool + block, src, bytes);
    }
    persist_fence();
}

// Claim, racing on the pool: one lane CASes the slot EMPTY -> INSERT. True if it won.
__device__ __forceinline__ bool claim_slot(uint8_t* pool, uint64_t slot) {
    return cas_meta(pool, slot, kEmpty, kInsertState);
}

// Key, after a claim: the whole warp writes the key (padded to its stride), then fences.
template <bool KeyInPool>
__device__ __forceinline__ void write_slot_key(const TableParams& t, uint8_t* pool, uint64_t slot, const uint8_t* key) {
    warp_store_key<KeyInPool>(t, pool + slot + 8, key);
    persist_fence();
}

// Claim and key by one thread, where the claim was decided elsewhere (the mirror): the INSERT state
// and the key, then the fence. Both land in an EMPTY slot, so their order does not matter: a crash
// leaves EMPTY (a stale key is ignored) or INSERT (cleared by recovery).
__device__ __forceinline__ void store_claim_and_key(const TableParams& t, uint8_t* pool, uint64_t slot,
                                                    const uint8_t* key) {
    const int ks = static_cast<int>(t.key_size);
    uint8_t* s = pool + slot;
    if (t.key_stride == 8) {  // 16-byte slots, 16-byte aligned: one store
        const unsigned long long k = key_word(key, 0, ks);
        asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(s), "l"(kInsertState), "l"(k) : "memory");
    } else {
        store_meta(pool, slot, kInsertState);
        for (int w = 0; w < t.key_stride / 8; ++w) {
            __stcg(reinterpret_cast<unsigned long long*>(s + 8) + w, static_cast<unsigned long long>(key_word(key, w, ks)));
        }
    }
    persist_fence();
}

// Publish, replace or clear: one store of the meta word, then the fence. For a slot no other warp
// can change (claimed by this operation, or the pipeline's).
__device__ __forceinline__ void publish_slot(uint8_t* pool, uint64_t slot, uint64_t meta) {
    store_meta(pool, slot, meta);
    persist_fence();
}

// Replace or clear, racing on the pool: CAS the meta word from `expected`, fenced if it won.
__device__ __forceinline__ bool swap_slot(uint8_t* pool, uint64_t slot, uint64_t expected, uint64_t desired) {
    const bool won = cas_meta(pool, slot, expected, desired);
    if (won) {
        persist_fence();
    }
    return won;
}

}  // namespace gphash
