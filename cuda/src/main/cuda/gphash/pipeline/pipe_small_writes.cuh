// A small writing batch of distinct keys in one launch: the pipeline's ungrouped stages
// (org.gphash.cuda.pipeline.BatchPipeline#queueStages with every operation its own group and one address bin),
// run in the same order by one block, with a block barrier where the graph has a kernel boundary.
// A batch of a few operations spends its GPU time on the graph's two dozen launches, not on work;
// here it pays for one. The stages are the same device functions, which stride over their work by
// the launch's threads (one block here), so the results are the pipeline's.
//
// Persist order is kept: every phase's threads fence their own pool stores (persist_fence, as in the
// separate kernels), and no thread starts the next phase before the barrier, so phase V is durable
// before any key of phase K is stored, and K before any meta word of phase M.
//
// The heap's take is the one stage that differs. The graph counts every bitmap word's free blocks
// and scans the counts (three launches over the whole heap) to take the lowest free blocks. Here the
// block takes the next free blocks after a cursor (next fit): it walks the bitmap a block's width of
// words at a time from where the last small take stopped, wrapping at the end, and takes free
// blocks in the order it meets them, which is address order except across the wrap. A lowest-first
// walk was tried first and was slow: each batch's frees pulled it back to the bottom of the heap,
// and it then walked thousands of full words to find the next free block. Blocks freed behind the
// cursor are taken when it comes round again, or by the next large batch, which still takes the
// lowest.
#pragma once
#include <cstdint>
#include <cub/block/block_scan.cuh>
#include "address_bins.cuh"
#include "heap_bitmap.cuh"
#include "pipe_group.cuh"
#include "pipe_params.cuh"
#include "pipe_read.cuh"
#include "pipe_resolve.cuh"
#include "pipe_semantics.cuh"
#include "pipe_write.cuh"

namespace gphash {

// Threads of the one block (org.gphash.cuda.runtime.Launcher.BLOCK).
constexpr int kSmallWritesThreads = 256;
// Operations of a batch this kernel runs at most (org.gphash.GpuTuning.SMALL_WRITES_LIMIT); any size up to
// the pipeline buffers' smallest capacity class (4096) would run, since every stage strides.
constexpr int kSmallWritesMax = 1024;

constexpr int kSmallReads = 1;
constexpr int kSmallWrites = 2;
constexpr int kSmallCacheOn = 4;

// Block-wide: the next `wanted` free blocks from the cursor (see above) into blocks[0..wanted); the
// cursor then stays in the last word taken from. A shortfall (the host sizes the heap first: never)
// is counted in `short_count`.
__device__ void heap_take_next_fit(const HeapParams& h, uint64_t wanted, uint64_t* blocks,
                                   unsigned long long* taken, unsigned long long* short_count) {
    using Scan = cub::BlockScan<uint32_t, kSmallWritesThreads>;
    __shared__ typename Scan::TempStorage scan;
    __shared__ unsigned long long found;  // free blocks seen in the words walked so far
    __shared__ unsigned long long last;   // the walk position (0-based, from the cursor) of the last word taken from
    auto* bits = reinterpret_cast<uint64_t*>(h.bitmap);
    auto* cursor = reinterpret_cast<unsigned long long*>(h.cursor);
    const uint64_t words = h.words;
    const uint64_t start = cursor != nullptr && words != 0 ? *cursor % words : 0;
    if (threadIdx.x == 0) {
        found = 0;
        last = ~0ull;
    }
    __syncthreads();
    for (uint64_t walked = 0; walked < words; walked += kSmallWritesThreads) {
        const uint64_t before = found;  // the same in every thread: written only between barriers
        if (before >= wanted) {
            break;
        }
        const uint64_t step = walked + threadIdx.x;
        uint64_t w = start + step;
        if (w >= words) {
            w -= words;
        }
        const uint32_t free = step < words ? static_cast<uint32_t>(__popcll(~bits[w])) : 0;
        uint32_t rank = 0;
        uint32_t total = 0;
        Scan(scan).ExclusiveSum(free, rank, total);
        const uint64_t r = before + rank;
        if (free != 0 && r < wanted) {
            if (heap_take_word(h, w, r, wanted, blocks, taken) >= wanted) {
                last = step;  // one thread: the word holding the wanted-th block
            }
        }
        __syncthreads();  // `scan` is reused and `found` read above
        if (threadIdx.x == 0) {
            found = before + total;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (found < wanted) {
            atomicAdd(short_count, static_cast<unsigned long long>(wanted - found));
        }
        if (last != ~0ull && cursor != nullptr) {
            *cursor = (start + last) % words;
        }
    }
    __syncthreads();
}

// When the host profiles stages (org.gphash.cuda.pipeline.StageProfile), thread 0 records the GPU's clock
// (ns) after each stage, as StageProfile.Stage numbers them, into stamps[1 + stage]; stamps[0] is
// the start. Stages this batch skips repeat the previous stamp.
__device__ __forceinline__ void small_writes_stamp(unsigned long long* stamps, int index) {
    if (stamps != nullptr && threadIdx.x == 0) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        stamps[index] = now;
    }
}

// Empties the one address bin the lists of this batch use (address_shift puts every offset in bin 0).
__device__ __forceinline__ void small_writes_clear_bin(const PipeParams& p) {
    if (threadIdx.x == 0) {
        arr<uint32_t>(p.bins)[0] = 0;
        arr<uint32_t>(p.bin_fill)[0] = 0;
        arr<uint32_t>(p.bin_start)[0] = 0;
    }
    __syncthreads();
}

// Empties the lines table phase M gathers a batch's lines in (its 2 x capacity entries: a few hundred
// here, where the pipeline clears it with a memset). The barrier after is the caller's.
__device__ __forceinline__ void small_writes_clear_lines(const PipeParams& p) {
    for (uint64_t i = threadIdx.x; i < p.table_capacity; i += blockDim.x) {
        arr<unsigned long long>(p.lines)[i] = 0;
    }
}

// The whole batch. `flags`: kSmallReads, kSmallWrites, kSmallCacheOn. One block of kSmallWritesThreads.
// `stamps`: null, or 13 clock readings (small_writes_stamp).
__device__ void pipe_small_writes(const TableParams& t, const TableParams& mt, const PipeParams& p,
                                  const CacheParams& c, const HeapParams& h, int flags, unsigned long long* stamps) {
    const bool reads = (flags & kSmallReads) != 0;
    const bool writes = (flags & kSmallWrites) != 0;
    small_writes_stamp(stamps, 0);
    // GROUP: ungrouped, every operation its own group. The host found the keys distinct, which is
    // what pipe_decide's sample would conclude (no repeats), so the counters are set without it.
    for (int i = threadIdx.x; i < kPipeCounterCount; i += blockDim.x) {
        pipe_counters(p)[i] = i == kPipeUngrouped ? 1 : 0;
    }
    __syncthreads();
    small_writes_clear_bin(p);
    pipe_identity_groups(t, p);
    __syncthreads();
    small_writes_stamp(stamps, 1);  // SORT: none
    small_writes_stamp(stamps, 2);
    // RESOLVE, SEMANTICS, PLACE
    pipe_resolve(t, mt, p, c);
    __syncthreads();
    small_writes_stamp(stamps, 3);
    if (writes) {
        pipe_source_input(p);
        __syncthreads();
        pipe_net(p);
        __syncthreads();
    }
    small_writes_stamp(stamps, 4);
    if (writes) {
        pipe_place(t, mt, p);
        __syncthreads();
    }
    pipe_outcome(p);
    __syncthreads();
    small_writes_stamp(stamps, 5);
    // READ
    if (reads) {
        pipe_read_list(p);
        __syncthreads();
        bin_scatter(p, kPipeReads, arr<uint32_t>(p.reads), arr<uint32_t>(p.g_read));
        __syncthreads();
        pipe_gather(t, p, c);
        __syncthreads();
        pipe_fanout(t, p);
        __syncthreads();
    }
    small_writes_stamp(stamps, 6);
    if (!writes) {
        return;
    }
    // TAKE
    heap_take_next_fit(h, pipe_count(p, kPipeValueWrites), arr<uint64_t>(p.blocks),
                       pipe_counters(p) + kPipeBlocksTaken, pipe_counters(p) + kPipeHeapShort);
    small_writes_stamp(stamps, 7);
    // WRITE_VALUES (phase V), WRITE_KEYS (phase K), PUBLISH (phase M), then GPU memory only
    small_writes_clear_lines(p);
    small_writes_clear_bin(p);
    pipe_write_values(t, p);
    __syncthreads();
    bin_scatter(p, kPipeSlotWrites, arr<uint32_t>(p.slot_writes), nullptr);
    __syncthreads();
    small_writes_stamp(stamps, 8);
    pipe_write_keys(t, mt, p);
    __syncthreads();
    small_writes_stamp(stamps, 9);
    pipe_line_table(t, mt, p);
    __syncthreads();
    pipe_publish_pool(t, mt, p);
    __syncthreads();
    pipe_publish_mirror(t, mt, p);
    __syncthreads();
    small_writes_stamp(stamps, 10);
    if ((flags & kSmallCacheOn) != 0) {
        pipe_cache_mirror(t, mt, p, c);
        __syncthreads();
    }
    small_writes_stamp(stamps, 11);
    pipe_retire(p, h);
    __syncthreads();
    small_writes_stamp(stamps, 12);
}

}  // namespace gphash
