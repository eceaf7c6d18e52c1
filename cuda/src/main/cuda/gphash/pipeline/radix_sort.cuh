// A stable LSD radix sort of (uint32 key, uint32 value) pairs, 8 bits per pass. Each pass is three
// launches: per-tile digit counts, their exclusive scan (device_scan.cuh, digit-major so that the
// scan gives every (digit, tile) its first output position), and a stable scatter.
//
// Stability is what the pipeline needs from it: operations of one key must come out in batch order.
// The scatter ranks a whole tile at once with CUB's match-based block radix rank, which ranks equal
// digits in the order of a warp-striped arrangement (warp w holds the tile's items from w * 32 *
// kSortItems on, its item j in lane l being the (32 j + l)-th of them), that is in index order. It
// replaced rounds of one item per thread ranked by hand (__match_any_sync, then per-warp counts in
// shared memory), whose bookkeeping was most of a pass.
#pragma once
#include <cstdint>
#include <cub/block/block_radix_rank.cuh>
#include <cub/block/block_radix_sort.cuh>
#include "../core/table_params.cuh"

namespace gphash {

constexpr int kSortThreads = 256;
constexpr int kSortItems = 8;
constexpr int kSortTile = kSortThreads * kSortItems;
constexpr int kRadix = 256;
static_assert(kRadix == kSortThreads, "the scatter keeps one digit's offset per thread");

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
// tile's items of that digit, in index order. Positions past n hold all-ones keys: they rank after
// every real item of their digit (they come last in the tile) and are not written.
__device__ void radix_scatter(const uint32_t* keys, const uint32_t* vals, uint64_t n, int shift,
                              const uint32_t* offsets, uint64_t tiles, uint32_t* keys_out, uint32_t* vals_out) {
    using Rank = cub::BlockRadixRankMatch<kSortThreads, 8, false>;
    __shared__ typename Rank::TempStorage temp;
    __shared__ uint32_t out_base[kRadix];  // where the tile's items of a digit go, less the tile's items below it
    const uint64_t lane = static_cast<uint64_t>(lane_id());
    const uint64_t first = blockIdx.x * static_cast<uint64_t>(kSortTile) +
                           (threadIdx.x / kWarpSize) * static_cast<uint64_t>(kWarpSize * kSortItems) + lane;
    uint32_t k[kSortItems];
    int rank[kSortItems];
    int below[1];  // Rank's BINS_TRACKED_PER_THREAD (kRadix / kSortThreads): digit threadIdx.x
#pragma unroll
    for (int j = 0; j < kSortItems; ++j) {
        const uint64_t i = first + static_cast<uint64_t>(j) * kWarpSize;
        k[j] = i < n ? keys[i] : ~0u;
    }
    Rank(temp).RankKeys(k, rank, cub::ShiftDigitExtractor<uint32_t>(shift, 8), below);
    out_base[threadIdx.x] = offsets[static_cast<uint64_t>(threadIdx.x) * tiles + blockIdx.x] - below[0];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kSortItems; ++j) {
        const uint64_t i = first + static_cast<uint64_t>(j) * kWarpSize;
        if (i < n) {
            const uint32_t at = out_base[(k[j] >> shift) & (kRadix - 1)] + static_cast<uint32_t>(rank[j]);
            keys_out[at] = k[j];
            vals_out[at] = vals[i];
        }
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
