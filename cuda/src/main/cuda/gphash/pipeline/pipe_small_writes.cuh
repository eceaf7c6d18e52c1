// A small writing batch in one launch: the pipeline's stages (org.gphash.cuda.pipeline.BatchPipeline#queueStages
// with one address bin), run in the same order by one cooperative grid, with a grid barrier where the
// graph has a kernel boundary: one launch and one copy each way for any small writing batch, where
// the graph has two to three dozen launches. A grid barrier costs about what a kernel boundary does,
// so a batch of 4096 takes as long on the GPU either way; a few hundred operations gain (measured:
// docs/PERFORMANCE.md, "small host batches"). The stages are the same device functions, which stride over
// their work by the launch's threads, so the results are the pipeline's.
//
// Keys may repeat. Grouped, the key table is the pipeline's (pipe_group), the sort the one-block
// radix sort (radix_sort.cuh, up to kBlockSortMax positions, so at most that many operations) and
// the two presence and value-source scans one block's scans (device_scan.cuh): block 0 runs those
// while the other blocks wait at the next barrier. A batch the host found free of repeated keys runs
// ungrouped (identity groups, no key table, sort or scans).
//
// Persist order is kept: every phase's threads fence their own pool stores (persist_fence, as in the
// separate kernels), and no thread starts the next phase before the grid barrier (which orders
// memory as a kernel boundary does), so phase V is durable before any key of phase K is stored, and
// K before any meta word of phase M.
//
// The heap's take is the one stage that differs from a large batch's. The graph counts every bitmap
// word's free blocks and scans the counts (three launches over the whole heap) to take the lowest
// free blocks. Here block 0 takes the next free blocks after a cursor (next fit), as the pipeline's
// small runs do (BatchPipeline.NEXT_FIT_MAX): it walks the bitmap a block's width of words at a time
// from where the last small take stopped, wrapping at the end, and takes free blocks in the order it
// meets them, which is address order except across the wrap. A lowest-first walk was tried first
// and was slow: each batch's frees pulled it back to the bottom of the heap, and it then walked
// thousands of full words to find the next free block. Blocks freed behind the cursor are taken
// when it comes round again, or by the next large batch, which still takes the lowest.
#pragma once
#include <cooperative_groups.h>
#include <cstdint>
#include <cub/block/block_scan.cuh>
#include "address_bins.cuh"
#include "device_scan.cuh"
#include "heap_bitmap.cuh"
#include "heap_segments.cuh"
#include "pipe_group.cuh"
#include "pipe_params.cuh"
#include "pipe_read.cuh"
#include "pipe_resolve.cuh"
#include "pipe_semantics.cuh"
#include "pipe_write.cuh"
#include "radix_sort.cuh"

namespace gphash {

// Threads of each block (org.gphash.cuda.runtime.Launcher.BLOCK).
constexpr int kSmallWritesThreads = 256;
// Operations of a batch this kernel runs at most (org.gphash.GpuTuning.SMALL_WRITES_LIMIT): the
// one-block sort's limit, and the pipeline buffers' smallest capacity class.
constexpr int kSmallWritesMax = 4096;

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

// When the host profiles stages (org.gphash.cuda.pipeline.StageProfile), the grid's thread 0 records
// the GPU's clock (ns) after each stage, as StageProfile.Stage numbers them, into stamps[1 + stage];
// stamps[0] is the start. Stages this batch skips repeat the previous stamp.
__device__ __forceinline__ void small_writes_stamp(unsigned long long* stamps, int index) {
    if (stamps != nullptr && global_thread() == 0) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        stamps[index] = now;
    }
}

// Empties the one address bin the lists of this batch use (address_shift puts every offset in bin 0).
// The barrier after is the caller's.
__device__ __forceinline__ void small_writes_clear_bin(const PipeParams& p) {
    if (global_thread() == 0) {
        arr<uint32_t>(p.bins)[0] = 0;
        arr<uint32_t>(p.bin_fill)[0] = 0;
        arr<uint32_t>(p.bin_start)[0] = 0;
    }
}

// Empties the lines table phase M gathers a batch's lines in (its 2 x capacity entries), as the
// pipeline's memset does. The barrier after is the caller's.
__device__ __forceinline__ void small_writes_clear_lines(const PipeParams& p) {
    for (uint64_t i = global_thread(); i < p.table_capacity; i += global_threads()) {
        arr<unsigned long long>(p.lines)[i] = 0;
    }
}

// The batch's counters set as pipe_decide would for a writing batch (every counter 0, the sort's
// count n when grouped), and for a grouped batch its key table emptied (the pipeline's memsets).
// The barrier after is the caller's.
__device__ __forceinline__ void small_writes_begin(const PipeParams& p, bool grouped) {
    const uint64_t n = pipe_batch(p).n;
    for (uint64_t i = global_thread(); i < kPipeCounterCount; i += global_threads()) {
        pipe_counters(p)[i] = i == kPipeUngrouped ? (grouped ? 0 : 1) : i == kPipeSortN && grouped ? n : 0;
    }
    if (grouped) {
        for (uint64_t i = global_thread(); i < p.table_capacity; i += global_threads()) {
            arr<unsigned int>(p.owner)[i] = kNoEntry;
        }
    }
    small_writes_clear_bin(p);
}

// Block 0: an inclusive max-scan of the first `capacity` positions of `at`, in place (the pipeline's
// inclusiveMax over its capacity class).
__device__ __forceinline__ void small_writes_scan_max(const PipeParams& p, uint64_t at) {
    if (blockIdx.x == 0) {
        scan_one_block<int32_t, MaxOp, true>(arr<const int32_t>(at), arr<int32_t>(at), p.capacity, -1);
    }
}

// The barrier between two stages: the grid's, or the block's where the grid is one block (a batch of
// a few operations), which orders memory within it as well and costs a fraction of a grid barrier's
// atomics and fences (a quarter of a batch of 8's GPU time).
__device__ __forceinline__ void stage_barrier() {
    if (gridDim.x == 1) {
        __syncthreads();
    } else {
        cooperative_groups::this_grid().sync();
    }
}

// The whole batch. `flags`: kSmallReads, kSmallWrites, kSmallCacheOn. `Grouped`: whether keys may
// repeat (the key table, sort and scans); the ungrouped instance is its own entry point, without the
// sort's and scans' 18 KB of shared memory, which cost a one-block batch of 8 a tenth of its GPU
// time. A cooperative launch of any number of blocks of kSmallWritesThreads (every block resident
// at once; a plain launch where it is one block), at most kSmallWritesMax operations. `stamps`:
// null, or 13 clock readings (small_writes_stamp).
template <bool Grouped>
__device__ void pipe_small_writes(const TableParams& t, const TableParams& mt, const PipeParams& p,
                                  const CacheParams& c, const HeapParams& h, int flags, unsigned long long* stamps) {
    constexpr bool grouped = Grouped;  // the name the stages' conditions read as
    const bool reads = (flags & kSmallReads) != 0;
    const bool writes = (flags & kSmallWrites) != 0;
    small_writes_stamp(stamps, 0);
    // GROUP: the key table (grouped), or every operation its own group (the host found the keys
    // distinct, which is what pipe_decide's sample would conclude, so the counters say so without it).
    small_writes_begin(p, grouped);
    stage_barrier();
    if constexpr (grouped) {
        pipe_group(t, p);
    } else {
        pipe_identity_groups(t, p);
    }
    stage_barrier();
    small_writes_stamp(stamps, 1);
    // SORT: by key table entry, stable, in place (PipelineBuffers.params: sorted_entry is sort_keys
    // for every class up to kBlockSortMax)
    if constexpr (grouped) {
        if (blockIdx.x == 0) {
            block_radix_sort(arr<uint32_t>(p.sort_keys), arr<uint32_t>(p.sort_vals), pipe_batch(p).n,
                             32 - __clz(static_cast<int>(p.table_capacity - 1)));
        }
        stage_barrier();
    }
    small_writes_stamp(stamps, 2);
    // RESOLVE
    if constexpr (grouped) {
        pipe_heads(p);
        stage_barrier();
    }
    pipe_resolve(t, mt, p, c);
    stage_barrier();
    small_writes_stamp(stamps, 3);
    // SEMANTICS (the scans only where members of one group follow each other)
    if constexpr (grouped) {
        if (writes) {
            small_writes_scan_max(p, p.last_set);
            stage_barrier();
        }
        pipe_source_input(p);
        stage_barrier();
        if (writes) {
            small_writes_scan_max(p, p.last_src);
            stage_barrier();
            pipe_net(p);
            stage_barrier();
        }
    } else if (writes) {
        pipe_source_input(p);
        stage_barrier();
        pipe_net(p);
        stage_barrier();
    }
    small_writes_stamp(stamps, 4);
    // PLACE
    if (writes) {
        pipe_place(t, mt, p);
        stage_barrier();
    }
    pipe_outcome(p);
    stage_barrier();
    small_writes_stamp(stamps, 5);
    // READ
    if (reads) {
        pipe_read_list(t, p);
        stage_barrier();
        bin_scatter(p, kPipeReads, arr<uint32_t>(p.reads), arr<uint32_t>(p.g_read));
        stage_barrier();
        pipe_gather(t, p, c);
        stage_barrier();
        pipe_fanout(t, p);
        stage_barrier();
    }
    small_writes_stamp(stamps, 6);
    if (!writes) {
        return;
    }
    // TAKE (format 2: block 0, next fit; format 3: its steps over the grid, from its cursor)
    if (h.segmented != 0) {
        pipe_value_classes(t, p, h);
        stage_barrier();
        if (blockIdx.x == 0) {
            seg_take_want_plan(h, pipe_count(p, kPipeValueWrites), pipe_batch(p).lengths != 0);
            __syncthreads();
            seg_take_runs(h, arr<uint64_t>(p.blocks));
        }
        stage_barrier();
        seg_take_held(h, arr<uint64_t>(p.blocks), pipe_counters(p) + kPipeHeapDisagree, global_warp(), global_warps());
        stage_barrier();
        if (blockIdx.x == 0) {
            seg_take_plan(h, pipe_counters(p) + kPipeBlocksTaken, pipe_counters(p) + kPipeHeapShort);
        }
        stage_barrier();
        seg_take_fresh(h, arr<uint64_t>(p.blocks), global_thread(), global_threads());
    } else if (blockIdx.x == 0) {
        heap_take_next_fit(h, pipe_count(p, kPipeValueWrites), arr<uint64_t>(p.blocks),
                           pipe_counters(p) + kPipeBlocksTaken, pipe_counters(p) + kPipeHeapShort);
    }
    small_writes_clear_lines(p);
    small_writes_clear_bin(p);
    stage_barrier();
    small_writes_stamp(stamps, 7);
    // WRITE_VALUES (phase V), WRITE_KEYS (phase K), PUBLISH (phase M), then GPU memory only
    pipe_write_values(t, p, h);
    stage_barrier();
    bin_scatter(p, kPipeSlotWrites, arr<uint32_t>(p.slot_writes), nullptr);
    stage_barrier();
    small_writes_stamp(stamps, 8);
    pipe_write_keys(t, mt, p);
    stage_barrier();
    small_writes_stamp(stamps, 9);
    pipe_line_table(t, mt, p);
    stage_barrier();
    pipe_publish_pool(t, mt, p);
    stage_barrier();
    pipe_publish_mirror(t, mt, p);
    stage_barrier();
    small_writes_stamp(stamps, 10);
    if ((flags & kSmallCacheOn) != 0) {
        pipe_cache_mirror(t, mt, p, c);
        stage_barrier();
    }
    small_writes_stamp(stamps, 11);
    pipe_retire(t, p, h);
    small_writes_stamp(stamps, 12);
}

}  // namespace gphash
