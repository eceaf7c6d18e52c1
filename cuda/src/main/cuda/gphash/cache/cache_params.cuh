// BktCache (GPHash §3.3) as kernels see it: hot pool buckets copied into GPU memory, with their
// values, so that a search whose bucket is cached reads nothing across PCIe.
// Mirrors org.gphash.cuda.runtime.KernelParams.cache byte for byte (every field 8 bytes, little-endian).
//
// Buckets of the pool are numbered across levels, top level first: bucket b of level d is
// 2^(T+1) - 2^(T+1-d) + b, for a top level of 2^T buckets. F(x) maps pool bucket x to its cache
// entry (or kNotCached); G(y) maps entry y back to its pool bucket. An entry holds `slots` cached
// slots of slot_size bytes: the pool slot's meta word and key, as in the pool, then the value.
#pragma once
#include <cstdint>
#include "../probe/candidate_order.cuh"
#include "../core/table_params.cuh"

namespace gphash {

struct CacheParams {
    uint64_t capacity;       // entries; 0: no cache, every other field unused
    uint64_t f;              // uint32_t[total_buckets]: F(x), see the states below
    uint64_t g;              // uint32_t[capacity]: G(y), a pool bucket or kNotCached
    uint64_t refs;           // uint32_t[capacity]: operations reading or mirroring into the entry
    uint64_t entries;        // capacity * slots * slot_size bytes
    uint64_t slot_size;      // 8 (meta) + key_stride + value bytes, rounded up to 16
    uint64_t scores;         // uint32_t[total_buckets]: LFU counters or LRU stamps
    uint64_t total_buckets;
    uint64_t policy;         // org.gphash.bktcache.CachePolicy ordinal
    uint64_t sample_mask;    // an access is recorded when hash(op, clock) & sample_mask == 0
    uint64_t clock;          // this launch's sequence number: the LRU stamp and the sampling salt
    uint64_t stats;          // unsigned long long[kCacheStatCount], added to by batch kernels
};

enum CachePolicyKind : int { kLfu = 0, kLru = 1, kRandom = 2 };

enum CacheStat : int { kCacheHits = 0, kCacheMisses = 1, kCacheStatCount = 4 };

// F(x) states. Published: the entry number. While a load copies x into entry y: kLoading | y, plus
// kDirty once a writer has changed x in the pool since the copy began (the copy is then redone).
constexpr uint32_t kNotCached = 0xFFFFFFFFu;
constexpr uint32_t kLoading = 0x80000000u;
constexpr uint32_t kDirty = 0x40000000u;
constexpr uint32_t kEntryMask = 0x3FFFFFFFu;

// A cached slot's meta word while a mirror rewrites the slot (never a pool meta word: its offset
// is not a block's).
constexpr uint64_t kBusyMeta = ~0ull;

__device__ __forceinline__ bool cache_on(const CacheParams& c) { return c.capacity != 0; }

__device__ __forceinline__ bool published(uint32_t f) { return (f & kLoading) == 0; }

__device__ __forceinline__ uint32_t* cache_map_f(const CacheParams& c) { return reinterpret_cast<uint32_t*>(c.f); }
__device__ __forceinline__ uint32_t* cache_map_g(const CacheParams& c) { return reinterpret_cast<uint32_t*>(c.g); }
__device__ __forceinline__ unsigned int* cache_refs(const CacheParams& c) {
    return reinterpret_cast<unsigned int*>(c.refs);
}

__device__ __forceinline__ uint32_t load_map(const uint32_t* word) { return *reinterpret_cast<const volatile uint32_t*>(word); }

__device__ __forceinline__ uint8_t* cached_slot(const TableParams& t, const CacheParams& c, uint32_t y, int s) {
    return reinterpret_cast<uint8_t*>(c.entries) + (static_cast<uint64_t>(y) * t.slots + s) * c.slot_size;
}

__device__ __forceinline__ uint64_t cached_value_offset(const TableParams& t) { return 8 + t.key_stride; }

// Takes a reference on pool bucket x's entry if x is cached, and returns the entry, else -1. A load
// evicting the entry first unpublishes F(x), then waits for references to drain: so either it sees
// ours, or we see F(x) changed (the fences order each side's store before its load).
__device__ __forceinline__ int acquire_entry(const CacheParams& c, uint64_t x) {
    uint32_t* f = cache_map_f(c) + x;
    const uint32_t y = load_map(f);
    if (!published(y)) {
        return -1;
    }
    atomicAdd(cache_refs(c) + y, 1u);
    __threadfence();
    if (load_map(f) != y) {
        atomicSub(cache_refs(c) + y, 1u);
        return -1;
    }
    return static_cast<int>(y);
}

__device__ __forceinline__ void release_entry(const CacheParams& c, int y) {
    if (y >= 0) {
        __threadfence();  // our reads of the entry are done before a load may overwrite it
        atomicSub(cache_refs(c) + y, 1u);
    }
}

}  // namespace gphash
