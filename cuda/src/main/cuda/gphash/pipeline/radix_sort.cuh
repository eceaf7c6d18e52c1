// A stable LSD radix sort of (uint32 key, uint32 value) pairs, 8 bits per pass. Each pass is three
// launches: per-tile digit counts, their exclusive scan (device_scan.cuh, digit-major so that the
// scan gives every (digit, tile) its first output position), and a stable scatter.
//
// Stability is what the pipeline needs from it: operations of one key must come out in batch order.
// The scatter ranks items in index order explicitly: a tile is walked in rounds of one item per
// thread; within a round, lanes of equal digit are ranked with __match_any_sync, warps by the counts
// of the warps before them, rounds by a running count per digit.
#pragma once
#include <cstdint>
#include <cub/block/block_radix_sort.cuh>
#include "../table_params.cuh"

namespace gphash {

constexpr int kSortThreads = 256;
constexpr int kSortItems = 8;
constexpr int kSortTile = kSortThreads * kSortItems;
constexpr int kRadix = 256;
constexpr int kSortWarps = kSortThreads / kWarpSize;

__device__ __forceinline__ uint64_t sort_count(uint64_t host_n, const uint64_t* n_at) {
    return n_at != nullptr ? *n_at : host_n;
}

// counts[digit * tiles + tile] = items of tile `blockIdx.x` whose digit at `shift` is `digit`.
__device__ void radix_count(const uint32_t* keys, uint64_t n, int shift, uint32_t* counts, uint64_t tiles) {
    __shared__ uint32_t hist[kRadix];
    hist[threadIdx.x] = 0;
    __syncthreads();
    const uint64_t base = blockIdx.x * static_cast<uint64_t>(kSortTile);
    for (int k = 0; k < kSortItems; ++k) {
        const uint64_t i = base + static_cast<uint64_t>(k) * kSortThreads + threadIdx.x;
        if (i < n) {
            atomicAdd(&hist[(keys[i] >> shift) & (kRadix - 1)], 1u);
        }
    }
    __syncthreads();
    counts[static_cast<uint64_t>(threadIdx.x) * tiles + blockIdx.x] = hist[threadIdx.x];
}

// Writes every item of tile `blockIdx.x` to offsets[digit * tiles + tile] + its rank among the
// tile's items of that digit, in index order.
__device__ void radix_scatter(const uint32_t* keys, const uint32_t* vals, uint64_t n, int shift,
                              const uint32_t* offsets, uint64_t tiles, uint32_t* keys_out, uint32_t* vals_out) {
    __shared__ uint32_t running[kRadix];
    __shared__ uint32_t warp_counts[kSortWarps][kRadix];
    const int tid = static_cast<int>(threadIdx.x);
    const int warp = tid / kWarpSize;
    const int lane = tid & (kWarpSize - 1);
    running[tid] = offsets[static_cast<uint64_t>(tid) * tiles + blockIdx.x];
    const uint64_t base = blockIdx.x * static_cast<uint64_t>(kSortTile);
    for (int k = 0; k < kSortItems; ++k) {
        for (int w = 0; w < kSortWarps; ++w) {
            warp_counts[w][tid] = 0;
        }
        __syncthreads();
        const uint64_t i = base + static_cast<uint64_t>(k) * kSortThreads + tid;
        const bool valid = i < n;
        const uint32_t key = valid ? keys[i] : 0;
        const uint32_t digit = (key >> shift) & (kRadix - 1);
        // Invalid lanes form a group of their own (no digit is 0xFFFFFFFF).
        const uint32_t peers = __match_any_sync(kFullMask, valid ? digit : 0xFFFFFFFFu);
        const uint32_t rank = __popc(peers & ((1u << lane) - 1));
        if (valid && lane == __ffs(peers) - 1) {
            warp_counts[warp][digit] = __popc(peers);
        }
        __syncthreads();
        if (valid) {
            uint32_t before = running[digit] + rank;
            for (int w = 0; w < warp; ++w) {
                before += warp_counts[w][digit];
            }
            keys_out[before] = key;
            vals_out[before] = vals[i];
        }
        __syncthreads();
        uint32_t round = 0;
        for (int w = 0; w < kSortWarps; ++w) {
            round += warp_counts[w][tid];
        }
        running[tid] += round;
        // The next round clears warp_counts[.][tid] in this same thread, after this read.
    }
}

// Runs of at most kBlockSortMax pairs sort in one launch of one block, in place: the multi-pass
// sort above is five launches a pass, which is most of a small batch's sort time (fixed costs, not
// work). CUB's block radix sort ranks stably, as the pipeline needs; padding keys (all ones) come
// from positions past n, so among keys equal to them they sort last and every real pair stays
// below n.
constexpr int kBlockSortItems = 16;
constexpr int kBlockSortMax = kSortThreads * kBlockSortItems;

__device__ void block_radix_sort(uint32_t* keys, uint32_t* vals, uint64_t n, int bits) {
    using Sort = cub::BlockRadixSort<uint32_t, kSortThreads, kBlockSortItems, uint32_t>;
    __shared__ typename Sort::TempStorage temp;
    uint32_t k[kBlockSortItems];
    uint32_t v[kBlockSortItems];
#pragma unroll
    for (int j = 0; j < kBlockSortItems; ++j) {
        const uint64_t i = static_cast<uint64_t>(threadIdx.x) * kBlockSortItems + j;  // blocked: input order
        k[j] = i < n ? keys[i] : ~0u;
        v[j] = i < n ? vals[i] : 0u;
    }
    Sort(temp).Sort(k, v, 0, bits);
#pragma unroll
    for (int j = 0; j < kBlockSortItems; ++j) {
        const uint64_t i = static_cast<uint64_t>(threadIdx.x) * kBlockSortItems + j;
        if (i < n) {
            keys[i] = k[j];
            vals[i] = v[j];
        }
    }
}

}  // namespace gphash
