// Device-wide scans, reduce-then-scan in three kernels over tiles of kScanTile items: the reduction
// of every tile, an exclusive scan of those (one block), then each tile scanned with its prefix.
// Built on CUB's block collectives; the operators used (sum, max) are commutative.
#pragma once
#include <cstdint>
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

namespace gphash {

constexpr int kScanThreads = 256;
constexpr int kScanItems = 8;
constexpr int kScanTile = kScanThreads * kScanItems;

struct SumOp {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

struct MaxOp {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const { return a > b ? a : b; }
};

// Kernel 1: partials[tile] = the reduction of tile `blockIdx.x` of in[0..n).
template <typename T, typename Op>
__device__ void scan_reduce_tiles(const T* in, uint64_t n, T identity, T* partials) {
    using Reduce = cub::BlockReduce<T, kScanThreads>;
    __shared__ typename Reduce::TempStorage temp;
    const uint64_t base = blockIdx.x * static_cast<uint64_t>(kScanTile);
    const int valid = base >= n ? 0 : static_cast<int>(n - base < kScanTile ? n - base : kScanTile);
    T items[kScanItems];
    cub::LoadDirectBlocked(static_cast<int>(threadIdx.x), in + (valid > 0 ? base : 0), items, valid, identity);
    T acc = items[0];
    for (int k = 1; k < kScanItems; ++k) {
        acc = Op()(acc, items[k]);
    }
    const T total = Reduce(temp).Reduce(acc, Op());
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = total;
    }
}

// One tile of `valid` items scanned from `in` to `out` (in place allowed: each thread stores only
// the items it loaded), each result offset by `prefix`; returns the tile's aggregate.
template <typename T, typename Op, bool Inclusive>
__device__ __forceinline__ T scan_tile(typename cub::BlockScan<T, kScanThreads>::TempStorage& temp, const T* in, T* out,
                                       int valid, T identity, T prefix) {
    using Scan = cub::BlockScan<T, kScanThreads>;
    T items[kScanItems];
    cub::LoadDirectBlocked(static_cast<int>(threadIdx.x), in, items, valid, identity);
    T aggregate;
    if (Inclusive) {
        Scan(temp).InclusiveScan(items, items, Op(), aggregate);
    } else {
        Scan(temp).ExclusiveScan(items, items, identity, Op(), aggregate);
    }
    for (int k = 0; k < kScanItems; ++k) {
        items[k] = Op()(prefix, items[k]);
    }
    cub::StoreDirectBlocked(static_cast<int>(threadIdx.x), out, items, valid);
    return aggregate;
}

// Kernel 3: out = the scan of in, each tile offset by its exclusive prefix from kernel 2.
template <typename T, typename Op, bool Inclusive>
__device__ void scan_tiles(const T* in, T* out, uint64_t n, T identity, const T* partials) {
    __shared__ typename cub::BlockScan<T, kScanThreads>::TempStorage temp;
    const uint64_t base = blockIdx.x * static_cast<uint64_t>(kScanTile);
    if (base >= n) {
        return;  // the whole block leaves together
    }
    const int valid = static_cast<int>(n - base < kScanTile ? n - base : kScanTile);
    scan_tile<T, Op, Inclusive>(temp, in + base, out + base, valid, identity, partials[blockIdx.x]);
}

// One block scans all of in[0..n), walking the tiles in order with a running prefix. Kernel 2 of the
// scan above (the tile reductions' exclusive scan, in place), and the whole scan of at most
// kSmallScanMax items, whose three launches would be most of a small batch's scan time.
constexpr int kSmallScanMax = 8 * kScanTile;

template <typename T, typename Op, bool Inclusive>
__device__ void scan_one_block(const T* in, T* out, uint64_t n, T identity) {
    __shared__ typename cub::BlockScan<T, kScanThreads>::TempStorage temp;
    T running = identity;
    for (uint64_t base = 0; base < n; base += kScanTile) {
        const int valid = static_cast<int>(n - base < kScanTile ? n - base : kScanTile);
        running = Op()(running, scan_tile<T, Op, Inclusive>(temp, in + base, out + base, valid, identity, running));
        __syncthreads();  // the temp storage is reused by the next tile
    }
}

}  // namespace gphash
