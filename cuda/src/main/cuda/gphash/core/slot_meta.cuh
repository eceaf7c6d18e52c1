// The meta word of a slot (org.gphash.format.SlotMeta): fingerprint in bits 63..48, value offset in
// bits 47..0. EMPTY is the word 0; INSERT is fingerprint 1; published items have fingerprint >= 2.
#pragma once
#include <cstdint>

namespace gphash {

constexpr uint64_t kEmpty = 0;
constexpr uint64_t kInsertState = 1ull << 48;
constexpr uint64_t kOffsetMask = (1ull << 48) - 1;
constexpr uint32_t kFirstValidFingerprint = 2;

__host__ __device__ __forceinline__ uint32_t meta_fingerprint(uint64_t meta) { return static_cast<uint32_t>(meta >> 48); }
__host__ __device__ __forceinline__ uint64_t meta_value_offset(uint64_t meta) { return meta & kOffsetMask; }
__host__ __device__ __forceinline__ bool meta_is_item(uint64_t meta) { return meta_fingerprint(meta) >= kFirstValidFingerprint; }
__host__ __device__ __forceinline__ uint64_t meta_make(uint32_t fp, uint64_t value_offset) {
    return (static_cast<uint64_t>(fp) << 48) | (value_offset & kOffsetMask);
}

// Pool words are read past L1 (volatile): another SM may have changed them, and a stale L1 line
// would hide the change. CPU threads never touch a pool while a kernel runs (the engine enforces it).
__device__ __forceinline__ uint64_t load_meta(const uint8_t* pool, uint64_t slot) {
    return *reinterpret_cast<const volatile uint64_t*>(pool + slot);
}

// A slot of 8-byte keys (meta word, key) in one 16-byte access: a fingerprint match then needs no
// second pool transaction to read the key.
__device__ __forceinline__ ulonglong2 load_meta_and_key(const uint8_t* pool, uint64_t slot) {
    ulonglong2 r;
    asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(r.x), "=l"(r.y) : "l"(pool + slot));
    return r;
}

__device__ __forceinline__ void store_meta(uint8_t* pool, uint64_t slot, uint64_t meta) {
    *reinterpret_cast<volatile uint64_t*>(pool + slot) = meta;
}

__device__ __forceinline__ bool cas_meta(uint8_t* pool, uint64_t slot, uint64_t expected, uint64_t desired) {
    auto* word = reinterpret_cast<unsigned long long*>(pool + slot);
    return atomicCAS(word, expected, desired) == expected;
}

// The GPU's persist barrier: every store this thread made to the mapped pool is visible to the
// host (and so in the file's pages) before any later one. Used where the CPU engine persists.
__device__ __forceinline__ void persist_fence() { __threadfence_system(); }

}  // namespace gphash
