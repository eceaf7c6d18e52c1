// A BktCache load (GPHash §3.3), run on the cache's own stream while batches go on:
//   1. select the hottest buckets, up to the capacity, entirely on the GPU: a radix select over the
//      32-bit scores (four histogram passes, one digit picked per pass) finds a threshold; buckets
//      above it, and enough ties, are chosen (optionally only those also hot at the previous load);
//   2. plan: chosen buckets already cached keep their entry; the others take entries that are empty
//      first, then entries whose bucket was not chosen;
//   3. fetch, one warp per entry: unpublish the old bucket's F, wait for the entry's references to
//      drain, mark F(x) loading, copy the bucket and its values, and publish F(x) = y with a CAS,
//      which fails (and the copy is redone) if a writer changed x meanwhile.
// LoadParams mirrors org.gphash.cuda.runtime.KernelParams.load byte for byte.
#pragma once
#include <cstdint>
#include "cache_params.cuh"
#include "cache_select.cuh"
#include "../core/key_hash.cuh"
#include "../core/slot_meta.cuh"
#include "../core/slot_meta_format.cuh"
#include "../core/table_params.cuh"
#include "../core/warp_append.cuh"
#include "../core/warp_copy.cuh"

namespace gphash {

struct LoadParams {
    uint64_t assign;       // uint32_t[capacity]: the pool bucket to load into entry y, or kNotCached
    uint64_t keep;         // uint8_t[capacity]: entry y's bucket was chosen again
    uint64_t incoming;     // uint32_t[capacity]: chosen buckets not cached yet
    uint64_t prev_hot;     // uint8_t[total_buckets]: among the hottest at the previous load
    uint64_t snapshot;     // uint32_t[total_buckets]: the scores as this load found them
    uint64_t state;        // unsigned long long[kLoadStateCount]
    uint64_t hist;         // unsigned long long[256]
    uint64_t k;            // buckets to choose: the cache's capacity
    uint64_t scan_guard;   // 1: admit only buckets hot at this load and the previous one
    uint64_t sequence;     // loads so far (the RANDOM policy's salt)
    uint64_t max_tries;    // copies of one bucket before it is left out of this load
};


__device__ __forceinline__ unsigned long long* load_state(const LoadParams& l) {
    return reinterpret_cast<unsigned long long*>(l.state);
}

// A bucket's score for this load; 0 means never accessed (never cached).
__device__ __forceinline__ uint32_t load_score(const CacheParams& c, const LoadParams& l, uint64_t x) {
    if (c.policy == kRandom) {
        return static_cast<uint32_t>(fmix64(x * 0x9E3779B97F4A7C15ull + l.sequence + 1)) | 1u;
    }
    return reinterpret_cast<const uint32_t*>(l.snapshot)[x];
}

// Pass of the radix select: histogram, by the digit at `shift`, of the nonzero scores whose higher
// digits equal the prefix picked so far.
__device__ void cache_histogram(const TableParams& t, const CacheParams& c, const LoadParams& l, int shift) {
    __shared__ unsigned int counts[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
        counts[i] = 0;
    }
    __syncthreads();
    const unsigned long long* st = load_state(l);
    if (st[kTakeAll] == 0) {
        const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
        for (uint64_t x = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; x < c.total_buckets; x += stride) {
            const uint32_t s = load_score(c, l, x);
            if (under_prefix(st, s)) {
                atomicAdd(&counts[select_digit(s, shift)], 1u);
            }
        }
    }
    __syncthreads();
    auto* hist = reinterpret_cast<unsigned long long*>(l.hist);
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
        if (counts[i] != 0) {
            atomicAdd(hist + i, static_cast<unsigned long long>(counts[i]));
        }
    }
}

// One thread: picks the digit at `shift` holding the k-th highest score (cache_select.cuh).
__device__ void cache_pick_digit(const LoadParams& l, int shift) {
    if (blockIdx.x != 0 || threadIdx.x != 0) {
        return;
    }
    pick_digit(load_state(l), reinterpret_cast<unsigned long long*>(l.hist), l.k, shift);
}

// Chooses the buckets (one thread each): scores above the threshold, and the first ties to come.
// Chosen buckets already cached keep their entry; the others are listed as incoming. Ages LFU
// counters by halving what this load saw (increments since then are kept).
__device__ void cache_select(const TableParams& t, const CacheParams& c, const LoadParams& l) {
    unsigned long long* st = load_state(l);
    const uint32_t threshold = static_cast<uint32_t>(st[kThreshold]);
    const unsigned long long ties = st[kTies];
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    const uint64_t first = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    const uint64_t rounds = (c.total_buckets + stride - 1) / stride;  // the same for every lane
    for (uint64_t r = 0; r < rounds; ++r) {
        const uint64_t x = first + r * stride;
        const bool in = x < c.total_buckets;
        const uint32_t s = in ? load_score(c, l, x) : 0;
        const bool tie = is_tie(s, threshold);
        const unsigned long long rank = warp_append(st + kTiesTaken, tie);
        const bool hot = admitted(s, threshold, rank, ties);
        bool chosen = hot;
        if (in && l.scan_guard != 0) {
            auto* prev = reinterpret_cast<uint8_t*>(l.prev_hot);
            chosen = hot && prev[x] != 0;
            prev[x] = hot ? 1 : 0;
        }
        uint32_t f = kNotCached;
        if (chosen) {
            f = load_map(cache_map_f(c) + x);
            if (published(f)) {
                reinterpret_cast<uint8_t*>(l.keep)[f] = 1;
            }
        }
        const bool incoming = chosen && !published(f);
        const unsigned long long i = warp_append(st + kIncoming, incoming);
        if (incoming && i < l.k) {
            reinterpret_cast<uint32_t*>(l.incoming)[i] = static_cast<uint32_t>(x);
        }
        const unsigned long long n = warp_append(st + kChosen, chosen);
        (void) n;
        if (in && c.policy == kLfu && s > 1) {
            atomicSub(reinterpret_cast<unsigned int*>(c.scores) + x, s - s / 2);
        }
    }
}

// Gives incoming buckets entries (one thread per entry): pass 0 empty entries, pass 1 entries whose
// bucket was not chosen again. An entry with no incoming bucket keeps what it holds.
__device__ void cache_plan(const CacheParams& c, const LoadParams& l, int pass) {
    unsigned long long* st = load_state(l);
    const unsigned long long incoming = min(st[kIncoming], static_cast<unsigned long long>(l.k));
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
    const uint64_t first = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    const uint64_t rounds = (c.capacity + stride - 1) / stride;
    for (uint64_t r = 0; r < rounds; ++r) {
        const uint64_t y = first + r * stride;
        bool free = false;
        if (y < c.capacity && reinterpret_cast<const uint8_t*>(l.keep)[y] == 0) {
            const bool empty = cache_map_g(c)[y] == kNotCached;
            free = pass == 0 ? empty : !empty;
        }
        const unsigned long long i = warp_append(st + kFreeTaken, free);
        if (free && i < incoming) {
            reinterpret_cast<uint32_t*>(l.assign)[y] = reinterpret_cast<const uint32_t*>(l.incoming)[i];
        }
    }
}

// Level and bucket number of global bucket x.
__device__ __forceinline__ void locate_bucket(const TableParams& t, uint64_t x, int& d, uint64_t& b) {
    uint64_t base = 0;
    for (d = 0; d < t.level_count; ++d) {
        const uint64_t size = 1ull << (t.top_log2 - d);
        if (x < base + size) {
            b = x - base;
            return;
        }
        base += size;
    }
    b = 0;  // unreachable: x < total_buckets
}

// Copies pool bucket (d, b) into entry y: meta words, keys and values. Whole warp.
__device__ __forceinline__ void copy_bucket(const TableParams& t, const CacheParams& c, int d, uint64_t b, uint32_t y) {
    const uint8_t* pool = reinterpret_cast<const uint8_t*>(t.pool);
    const uint64_t bucket = t.level_offset[d] + b * static_cast<uint64_t>(t.bucket_size);
    for (int s = 0; s < t.slots; ++s) {
        const uint64_t slot = bucket + static_cast<uint64_t>(s) * t.slot_size;
        uint8_t* copy = cached_slot(t, c, y, s);
        uint64_t meta = lane_id() == 0 ? load_meta(pool, slot) : 0;
        meta = __shfl_sync(kFullMask, meta, 0);
        warp_copy(copy + 8, pool + slot + 8, static_cast<uint64_t>(t.key_stride));
        if (meta_is_item(meta)) {
            warp_copy_padded(copy + cached_value_offset(t), pool + meta_value_at(t, meta),
                             meta_value_length(t, pool, meta), static_cast<uint64_t>(t.value_size));
        }
        if (lane_id() == 0) {
            store_meta(copy, 0, meta);
        }
    }
    __threadfence();
    __syncwarp();
}

// One warp per entry with an incoming bucket.
__device__ void cache_fetch(const TableParams& t, const CacheParams& c, const LoadParams& l) {
    const int lane = lane_id();
    const uint64_t warps = static_cast<uint64_t>(gridDim.x) * blockDim.x / kWarpSize;
    unsigned long long* st = load_state(l);
    uint32_t* f = cache_map_f(c);
    uint32_t* g = cache_map_g(c);
    for (uint64_t y = (blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) / kWarpSize; y < c.capacity;
         y += warps) {
        const uint32_t x = reinterpret_cast<const uint32_t*>(l.assign)[y];
        if (x == kNotCached) {
            continue;
        }
        const uint32_t entry = static_cast<uint32_t>(y);
        if (lane == 0) {
            const uint32_t old = g[y];
            if (old != kNotCached) {
                atomicExch(f + old, kNotCached);  // new operations stop using the entry
                g[y] = kNotCached;
                __threadfence();
                while (*reinterpret_cast<volatile unsigned int*>(cache_refs(c) + y) != 0) {
                    // operations that took a reference before F changed are still reading the entry
                }
            }
            atomicExch(f + x, kLoading | entry);
            __threadfence();  // F says loading before the bucket is read (writers read F after their write)
        }
        __syncwarp();
        int d;
        uint64_t b;
        locate_bucket(t, x, d, b);
        bool done = false;
        for (uint64_t attempt = 0; attempt < l.max_tries && !done; ++attempt) {
            copy_bucket(t, c, d, b, entry);
            if (lane == 0) {
                done = atomicCAS(f + x, kLoading | entry, entry) == (kLoading | entry);
                if (!done) {
                    atomicCAS(f + x, kLoading | kDirty | entry, kLoading | entry);  // a writer came by: copy again
                    __threadfence();
                }
            }
            done = __shfl_sync(kFullMask, done, 0);
        }
        if (lane == 0) {
            if (done) {
                g[y] = x;
                atomicAdd(st + kLoaded, 1ull);
            } else {
                atomicExch(f + x, kNotCached);
                atomicAdd(st + kAbandoned, 1ull);
            }
        }
        __syncwarp();
    }
}

}  // namespace gphash
