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
// value writes, reads, deletes; where values have lengths of their own (format 3, PipeBatch::lengths),
// also the writes whose length is over the value size (refused before anything runs), the bytes the
// blocks that share segments take, the writes whose blocks take runs of whole segments (over 8 KiB)
// with the segments those take, and then those writes by class, kValueClassCount words (what the heap
// must have room for). The host waits for them before every device
// batch, so the count goes the shortest way: each thread counts its share, a block sums in shared
// memory and adds once to `sums` (GPU memory: the kCountWords counts, then blocks done; zero before),
// and the last block to finish writes the totals into `host` (registered host memory, the first
// kCountWords words) and then `seq` into the next word, which the host spins on, and zeroes `sums` for
// the next count. Every warp's atomics on three words, then a copy back and a stream
// synchronisation, made this several times slower.
constexpr int kCountScalars = 7;
constexpr int kCountWords = kCountScalars + kValueClassCount;

__device__ __forceinline__ unsigned long long warp_sum64(unsigned long long v) {
    for (int d = kWarpSize / 2; d > 0; d >>= 1) {
        v += __shfl_down_sync(kFullMask, v, d);
    }
    return v;
}

__device__ void pipe_count_kinds(const TableParams& t, const PipeBatch& b, unsigned long long* sums,
                                 unsigned long long* host, unsigned long long seq) {
    __shared__ unsigned long long block[kCountWords];
    __shared__ bool last;
    for (int j = threadIdx.x; j < kCountWords; j += blockDim.x) {
        block[j] = 0;
    }
    __syncthreads();
    unsigned long long counts[kCountScalars] = {0, 0, 0, 0, 0, 0, 0};
    const uint32_t vs = static_cast<uint32_t>(t.value_size);
    for (uint64_t i = global_thread(); i < b.n; i += global_threads()) {
        const uint32_t op = op_at(b, i);
        const int kind = arr<const uint8_t>(b.kinds)[op];
        const bool writes = writes_value(kind);
        counts[0] += writes ? 1u : 0u;
        counts[1] += reads_value(kind) ? 1u : 0u;
        counts[2] += kind == kDelete ? 1u : 0u;
        if (writes && b.lengths != 0) {
            const uint32_t length = arr<const uint32_t>(b.lengths)[op];
            if (length > vs) {
                counts[3] += 1;
            } else {
                const int c = value_class_for(t, length);
                const uint32_t bytes = value_block_bytes(c);
                if (bytes > kSegmentBytes / 8) {
                    counts[5] += 1;
                    counts[6] += (bytes + kSegmentBytes - 1) / kSegmentBytes;
                    atomicAdd(&block[kCountScalars + c], 1ull);  // few: each carries 8 KiB or more
                } else {
                    counts[4] += bytes;
                }
            }
        }
    }
    for (int j = 0; j < kCountScalars; j++) {
        counts[j] = warp_sum64(counts[j]);
    }
    if (lane_id() == 0) {
        for (int j = 0; j < kCountScalars; j++) {
            if (counts[j] != 0) atomicAdd(&block[j], counts[j]);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int j = 0; j < kCountWords; j++) {
            if (block[j] != 0) atomicAdd(sums + j, block[j]);
        }
        __threadfence();
        last = atomicAdd(sums + kCountWords, 1ull) == gridDim.x - 1;
        if (last) {
            __threadfence();
            volatile unsigned long long* out = host;
            for (int j = 0; j < kCountWords; j++) {
                out[j] = atomicExch(sums + j, 0ull);
            }
            atomicExch(sums + kCountWords, 0ull);
            __threadfence_system();
            out[kCountWords] = seq;
            __threadfence_system();
        }
    }
}

}  // namespace gphash
