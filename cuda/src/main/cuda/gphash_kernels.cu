// The GPU engine's kernels, one translation unit so they ship as one fatbin (cuda/build-kernels.sh).
// Entry points are extern "C" so the host finds them by name (org.gphash.cuda.runtime.CudaRuntime).
#include "gphash/table/batch_kernel.cuh"
#include "gphash/cache/cache_load.cuh"
#include "gphash/pipeline/packed_columns.cuh"
#include "gphash/pipeline/pipeline.cuh"
#include "gphash/pipeline/refresh_buckets.cuh"
#include "gphash/pool/recovery_kernel.cuh"
#include "gphash/pool/rehash_kernel.cuh"

using gphash::BatchParams;
using gphash::CacheParams;
using gphash::HeapParams;
using gphash::LoadParams;
using gphash::PackedColumn;
using gphash::PartGather;
using gphash::PartScatter;
using gphash::PipeBatch;
using gphash::PipeParams;
using gphash::ScanArgs;
using gphash::ScanParams;
using gphash::ShardSplit;
using gphash::SmallReadsArgs;
using gphash::SortPass;
using gphash::TableParams;

extern "C" __global__ void gphash_batch(TableParams t, BatchParams b, CacheParams c) { gphash::run_batch(t, b, c); }

extern "C" __global__ void gphash_count_writes(BatchParams b) { gphash::count_writes(b); }

extern "C" __global__ void gphash_assign_blocks(BatchParams b, const uint64_t* reserved) {
    gphash::assign_blocks(b, reserved);
}

extern "C" __global__ void gphash_recover_level(TableParams t, ScanParams s) { gphash::recover_level(t, s); }

extern "C" __global__ void gphash_mark_level(TableParams t, ScanParams s) { gphash::mark_level(t, s); }

extern "C" __global__ void gphash_rehash_bottom(TableParams t, ScanParams s) { gphash::rehash_bottom(t, s); }

extern "C" __global__ void gphash_finish_device_batch(BatchParams b) { gphash::finish_device_batch(b); }

extern "C" __global__ void gphash_group_batch(TableParams t, BatchParams b) { gphash::group_batch(t, b); }

// BktCache loads (cache_load.cuh), queued on the cache's own stream.
extern "C" __global__ void gphash_cache_histogram(TableParams t, CacheParams c, LoadParams l, int shift) {
    gphash::cache_histogram(t, c, l, shift);
}

extern "C" __global__ void gphash_cache_pick_digit(LoadParams l, int shift) { gphash::cache_pick_digit(l, shift); }

extern "C" __global__ void gphash_cache_select(TableParams t, CacheParams c, LoadParams l) {
    gphash::cache_select(t, c, l);
}

extern "C" __global__ void gphash_cache_plan(CacheParams c, LoadParams l, int pass) { gphash::cache_plan(c, l, pass); }

extern "C" __global__ void gphash_cache_fetch(TableParams t, CacheParams c, LoadParams l) {
    gphash::cache_fetch(t, c, l);
}

// Device-wide primitives (pipeline/device_scan.cuh, pipeline/radix_sort.cuh).
extern "C" __global__ void gphash_radix_count(SortPass s) {
    gphash::radix_count(reinterpret_cast<const uint32_t*>(s.keys),
                        gphash::sort_count(s.n, reinterpret_cast<const uint64_t*>(s.n_at)), static_cast<int>(s.shift),
                        reinterpret_cast<uint32_t*>(s.counts), s.tiles);
}

extern "C" __global__ void gphash_radix_scatter(SortPass s) {
    gphash::radix_scatter(reinterpret_cast<const uint32_t*>(s.keys), reinterpret_cast<const uint32_t*>(s.vals),
                          gphash::sort_count(s.n, reinterpret_cast<const uint64_t*>(s.n_at)), static_cast<int>(s.shift),
                          reinterpret_cast<const uint32_t*>(s.counts), s.tiles, reinterpret_cast<uint32_t*>(s.keys_out),
                          reinterpret_cast<uint32_t*>(s.vals_out));
}

extern "C" __global__ void gphash_radix_block_sort(SortPass s, int bits) {
    gphash::block_radix_sort(reinterpret_cast<uint32_t*>(s.keys), reinterpret_cast<uint32_t*>(s.vals),
                             gphash::sort_count(s.n, reinterpret_cast<const uint64_t*>(s.n_at)), bits);
}

extern "C" __global__ void gphash_scan_small_exclusive_sum_u32(ScanArgs a) {
    gphash::scan_one_block<uint32_t, gphash::SumOp, false>(reinterpret_cast<const uint32_t*>(a.in),
                                                           reinterpret_cast<uint32_t*>(a.out), a.n, 0u);
}

extern "C" __global__ void gphash_scan_small_inclusive_max_i32(ScanArgs a) {
    gphash::scan_one_block<int32_t, gphash::MaxOp, true>(reinterpret_cast<const int32_t*>(a.in),
                                                         reinterpret_cast<int32_t*>(a.out), a.n, -1);
}

extern "C" __global__ void gphash_scan_reduce_sum_u32(ScanArgs a) {
    gphash::scan_reduce_tiles<uint32_t, gphash::SumOp>(reinterpret_cast<const uint32_t*>(a.in), a.n, 0u,
                                                       reinterpret_cast<uint32_t*>(a.partials));
}

extern "C" __global__ void gphash_scan_partials_sum_u32(ScanArgs a) {
    gphash::scan_one_block<uint32_t, gphash::SumOp, false>(reinterpret_cast<uint32_t*>(a.partials),
                                                           reinterpret_cast<uint32_t*>(a.partials),
                                                           (a.n + gphash::kScanTile - 1) / gphash::kScanTile, 0u);
}

extern "C" __global__ void gphash_scan_exclusive_sum_u32(ScanArgs a) {
    gphash::scan_tiles<uint32_t, gphash::SumOp, false>(reinterpret_cast<const uint32_t*>(a.in),
                                                       reinterpret_cast<uint32_t*>(a.out), a.n, 0u,
                                                       reinterpret_cast<const uint32_t*>(a.partials));
}

extern "C" __global__ void gphash_scan_reduce_max_i32(ScanArgs a) {
    gphash::scan_reduce_tiles<int32_t, gphash::MaxOp>(reinterpret_cast<const int32_t*>(a.in), a.n, -1,
                                                      reinterpret_cast<int32_t*>(a.partials));
}

extern "C" __global__ void gphash_scan_partials_max_i32(ScanArgs a) {
    gphash::scan_one_block<int32_t, gphash::MaxOp, false>(reinterpret_cast<int32_t*>(a.partials),
                                                          reinterpret_cast<int32_t*>(a.partials),
                                                          (a.n + gphash::kScanTile - 1) / gphash::kScanTile, -1);
}

extern "C" __global__ void gphash_scan_inclusive_max_i32(ScanArgs a) {
    gphash::scan_tiles<int32_t, gphash::MaxOp, true>(reinterpret_cast<const int32_t*>(a.in),
                                                     reinterpret_cast<int32_t*>(a.out), a.n, -1,
                                                     reinterpret_cast<const int32_t*>(a.partials));
}

// The HBM mirror's tags, built once the mirror is loaded (org.gphash.cuda.pipeline.DeviceIndexMirror).
extern "C" __global__ void gphash_mirror_build_tags(TableParams mt, unsigned long long buckets) {
    gphash::mirror_build_tags(mt, buckets);
}

// Pool buckets that host threads wrote between batches, copied again into the mirror and BktCache
// (org.gphash.cuda.HostWrites); mirror: 0 on the pool path, which has none.
extern "C" __global__ void gphash_refresh_buckets(TableParams t, TableParams mt, CacheParams c,
                                                  const unsigned long long* buckets, unsigned long long n,
                                                  unsigned long long mirror) {
    gphash::refresh_buckets(t, mt, mirror != 0, c, reinterpret_cast<const uint64_t*>(buckets), n);
}

// The v2 batch pipeline (pipeline/), in the order the host queues it (org.gphash.cuda.pipeline.BatchPipeline).
extern "C" __global__ void gphash_pipe_count_kinds(TableParams t, PipeBatch b, unsigned long long* sums,
                                                   unsigned long long* host, unsigned long long seq) {
    gphash::pipe_count_kinds(t, b, sums, host, seq);
}

extern "C" __global__ void gphash_pipe_group(TableParams t, PipeParams p) { gphash::pipe_group(t, p); }

extern "C" __global__ void gphash_pipe_heads(PipeParams p) { gphash::pipe_heads(p); }

extern "C" __global__ void gphash_pipe_identity_groups(TableParams t, PipeParams p) { gphash::pipe_identity_groups(t, p); }

extern "C" __global__ void gphash_pipe_decide(TableParams t, PipeParams p, int mode) { gphash::pipe_decide(t, p, mode); }

extern "C" __global__ void gphash_pipe_resolve(TableParams t, TableParams mt, PipeParams p, CacheParams c) {
    gphash::pipe_resolve(t, mt, p, c);
}

extern "C" __global__ void gphash_pipe_source_input(PipeParams p) { gphash::pipe_source_input(p); }

extern "C" __global__ void gphash_pipe_net(PipeParams p) { gphash::pipe_net(p); }

extern "C" __global__ void gphash_pipe_place(TableParams t, TableParams mt, PipeParams p) { gphash::pipe_place(t, mt, p); }

extern "C" __global__ void gphash_pipe_outcome(PipeParams p) { gphash::pipe_outcome(p); }

extern "C" __global__ void gphash_pipe_read_list(TableParams t, PipeParams p) { gphash::pipe_read_list(t, p); }

extern "C" __global__ void gphash_pipe_bin_reads(PipeParams p) {
    gphash::bin_scatter(p, gphash::kPipeReads, reinterpret_cast<uint32_t*>(p.reads), reinterpret_cast<uint32_t*>(p.g_read));
}

extern "C" __global__ void gphash_pipe_gather(TableParams t, PipeParams p, CacheParams c) { gphash::pipe_gather(t, p, c); }

extern "C" __global__ void gphash_pipe_fanout(TableParams t, PipeParams p) { gphash::pipe_fanout(t, p); }

extern "C" __global__ void gphash_heap_free_counts(HeapParams h) { gphash::heap_free_counts(h); }

extern "C" __global__ void gphash_pipe_take(PipeParams p, HeapParams h) { gphash::pipe_take(p, h); }

// Format 3's take, its steps (pipeline/heap_segments.cuh): the want step, the first plan (one block of
// a thread per class) and the runs step after it in the same block, the held step, the second plan (the same), the fresh step.
extern "C" __global__ void gphash_pipe_value_classes(TableParams t, PipeParams p, HeapParams h) {
    gphash::pipe_value_classes(t, p, h);
}

extern "C" __global__ void gphash_heap_take_want_plan(PipeParams p, HeapParams h) {
    gphash::seg_take_want_plan(h, gphash::pipe_count(p, gphash::kPipeValueWrites), gphash::pipe_batch(p).lengths != 0);
    __syncthreads();
    gphash::seg_take_runs(h, reinterpret_cast<uint64_t*>(p.blocks));
}

extern "C" __global__ void gphash_heap_take_held(PipeParams p, HeapParams h) {
    gphash::seg_take_held(h, reinterpret_cast<uint64_t*>(p.blocks), gphash::pipe_counters(p) + gphash::kPipeHeapDisagree,
                          gphash::global_warp(), gphash::global_warps());
}

extern "C" __global__ void gphash_heap_take_plan(PipeParams p, HeapParams h) {
    gphash::seg_take_plan(h, gphash::pipe_counters(p) + gphash::kPipeBlocksTaken,
                          gphash::pipe_counters(p) + gphash::kPipeHeapShort);
}

extern "C" __global__ void gphash_heap_check(HeapParams h, unsigned long long* out) { gphash::seg_check(h, out); }

extern "C" __global__ void gphash_heap_take_fresh(PipeParams p, HeapParams h) {
    gphash::seg_take_fresh(h, reinterpret_cast<uint64_t*>(p.blocks), gphash::global_thread(), gphash::global_threads());
}

// A small run's take: next fit in one block (pipe_small_writes.cuh), for classes up to BatchPipeline.NEXT_FIT_MAX.
extern "C" __global__ void __launch_bounds__(gphash::kSmallWritesThreads)
gphash_pipe_take_next_fit(PipeParams p, HeapParams h) {
    gphash::heap_take_next_fit(h, gphash::pipe_count(p, gphash::kPipeValueWrites),
                               reinterpret_cast<uint64_t*>(p.blocks), gphash::pipe_counters(p) + gphash::kPipeBlocksTaken,
                               gphash::pipe_counters(p) + gphash::kPipeHeapShort);
}

extern "C" __global__ void gphash_pipe_write_values(TableParams t, PipeParams p, HeapParams h) {
    gphash::pipe_write_values(t, p, h);
}

extern "C" __global__ void gphash_pipe_bin_slots(PipeParams p) {
    gphash::bin_scatter(p, gphash::kPipeSlotWrites, reinterpret_cast<uint32_t*>(p.slot_writes), nullptr);
}

extern "C" __global__ void gphash_pipe_write_keys(TableParams t, TableParams mt, PipeParams p) {
    gphash::pipe_write_keys(t, mt, p);
}

extern "C" __global__ void gphash_pipe_line_table(TableParams t, TableParams mt, PipeParams p) {
    gphash::pipe_line_table(t, mt, p);
}

extern "C" __global__ void gphash_pipe_publish_pool(TableParams t, TableParams mt, PipeParams p) {
    gphash::pipe_publish_pool(t, mt, p);
}

extern "C" __global__ void gphash_pipe_publish_mirror(TableParams t, TableParams mt, PipeParams p) {
    gphash::pipe_publish_mirror(t, mt, p);
}

extern "C" __global__ void gphash_pipe_cache_mirror(TableParams t, TableParams mt, PipeParams p, CacheParams c) {
    gphash::pipe_cache_mirror(t, mt, p, c);
}

extern "C" __global__ void gphash_pipe_retire(TableParams t, PipeParams p, HeapParams h) { gphash::pipe_retire(t, p, h); }

// A shard's part of a caller's batch, gathered before the pipeline and scattered after it (pipeline/part_columns.cuh).
extern "C" __global__ void gphash_part_gather(PartGather a) { gphash::part_gather(a); }

extern "C" __global__ void gphash_part_scatter(PartScatter a) { gphash::part_scatter(a); }
extern "C" __global__ void gphash_packed_spread(PackedColumn a) { gphash::packed_copy<true>(a); }
extern "C" __global__ void gphash_packed_gather(PackedColumn a) { gphash::packed_copy<false>(a); }

// A device-resident batch of a sharded index split by shard on its own GPU (pipeline/shard_split.cuh).
extern "C" __global__ void gphash_shard_split(ShardSplit a) { gphash::shard_split(a); }

// A small writing batch in one cooperative launch (org.gphash.cuda.pipeline.SmallWrites): keys
// distinct, and keys that may repeat (grouped by key in the launch).
extern "C" __global__ void __launch_bounds__(gphash::kSmallWritesThreads)
gphash_pipe_small_writes(TableParams t, TableParams mt, PipeParams p, CacheParams c, HeapParams h, int flags,
                         unsigned long long* stamps) {
    gphash::pipe_small_writes<false>(t, mt, p, c, h, flags, stamps);
}

extern "C" __global__ void __launch_bounds__(gphash::kSmallWritesThreads)
gphash_pipe_small_writes_grouped(TableParams t, TableParams mt, PipeParams p, CacheParams c, HeapParams h, int flags,
                                 unsigned long long* stamps) {
    gphash::pipe_small_writes<true>(t, mt, p, c, h, flags, stamps);
}

// A small batch of gets in one launch (org.gphash.cuda.pipeline.SmallReads).
extern "C" __global__ void gphash_pipe_small_reads(TableParams t, TableParams mt, CacheParams c, SmallReadsArgs a) {
    gphash::pipe_small_reads(t, mt, c, a);
}
