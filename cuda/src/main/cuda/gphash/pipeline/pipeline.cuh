// The v2 batch pipeline, all stages (see pipe_params.cuh for the data, DESIGN.md for the design):
//   group by key (pipe_group.cuh, radix_sort.cuh) -> look the keys up in the HBM mirror
//   (pipe_resolve.cuh) -> outcomes and net effects (pipe_semantics.cuh) -> claim insert slots in the
//   mirror (pipe_resolve.cuh) -> read pool values in address order (pipe_read.cuh) -> write values,
//   keys and meta words in persist order and address order (pipe_write.cuh). Small batches of gets
//   skip it all: one launch (pipe_small_reads.cuh); small writing batches run the same stages in one
//   cooperative launch, with a grid barrier between stages (pipe_small_writes.cuh).
#pragma once
#include "address_bins.cuh"
#include "device_scan.cuh"
#include "heap_bitmap.cuh"
#include "mirror_tags.cuh"
#include "part_columns.cuh"
#include "pipe_group.cuh"
#include "pipe_params.cuh"
#include "pipe_read.cuh"
#include "pipe_resolve.cuh"
#include "pipe_semantics.cuh"
#include "pipe_small_reads.cuh"
#include "pipe_small_writes.cuh"
#include "pipe_write.cuh"
#include "radix_sort.cuh"
#include "shard_split.cuh"

namespace gphash {

// Arguments of one radix sort pass (radix_sort.cuh). Mirrors org.gphash.cuda.runtime.KernelParams.sortPass.
struct SortPass {
    uint64_t keys;       // const uint32_t*
    uint64_t vals;       // const uint32_t*
    uint64_t keys_out;   // uint32_t*
    uint64_t vals_out;   // uint32_t*
    uint64_t n;          // items, unless n_at is set
    uint64_t n_at;       // const uint64_t*: the item count in device memory, or 0
    uint64_t shift;      // the digit's lowest bit
    uint64_t counts;     // uint32_t[kRadix * tiles]: counts, scanned in place into offsets
    uint64_t tiles;
};

// Arguments of one device-wide scan (device_scan.cuh). Mirrors org.gphash.cuda.runtime.KernelParams.scan.
struct ScanArgs {
    uint64_t in;
    uint64_t out;
    uint64_t n;
    uint64_t partials;   // one entry per tile of kScanTile items
};

// Counts of a device-resident batch's kinds, so the host can size the heap and skip stages:
// value writes, reads, deletes. The host waits for them before every device batch, so the count goes
// the shortest way: each thread counts its share, a block sums in shared memory and adds once to
// `sums` (GPU memory: value writes, reads, deletes, blocks done; zero before), and the last block to
// finish writes the totals into `host` (registered host memory, the first three words) and then
// `seq` into its fourth word, which the host spins on, and zeroes `sums` for the next count. Every
// warp's atomics on three words, then a copy back and a stream synchronisation, made this several
// times slower.
__device__ void pipe_count_kinds(const PipeBatch& b, unsigned long long* sums, unsigned long long* host,
                                 unsigned long long seq) {
    __shared__ unsigned int block[3];
    __shared__ bool last;
    if (threadIdx.x < 3) {
        block[threadIdx.x] = 0;
    }
    __syncthreads();
    uint32_t w = 0;
    uint32_t r = 0;
    uint32_t d = 0;
    for (uint64_t i = global_thread(); i < b.n; i += global_threads()) {
        const int kind = arr<const uint8_t>(b.kinds)[op_at(b, i)];
        w += writes_value(kind) ? 1u : 0u;
        r += reads_value(kind) ? 1u : 0u;
        d += kind == kDelete ? 1u : 0u;
    }
    w = __reduce_add_sync(kFullMask, w);
    r = __reduce_add_sync(kFullMask, r);
    d = __reduce_add_sync(kFullMask, d);
    if (lane_id() == 0) {
        if (w != 0) atomicAdd(&block[0], w);
        if (r != 0) atomicAdd(&block[1], r);
        if (d != 0) atomicAdd(&block[2], d);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int j = 0; j < 3; j++) {
            if (block[j] != 0) atomicAdd(sums + j, static_cast<unsigned long long>(block[j]));
        }
        __threadfence();
        last = atomicAdd(sums + 3, 1ull) == gridDim.x - 1;
        if (last) {
            __threadfence();
            volatile unsigned long long* out = host;
            for (int j = 0; j < 3; j++) {
                out[j] = atomicExch(sums + j, 0ull);
            }
            atomicExch(sums + 3, 0ull);
            __threadfence_system();
            out[3] = seq;
            __threadfence_system();
        }
    }
}

}  // namespace gphash
