// The GPU engine's kernels, one translation unit so they ship as one fatbin (cuda/build-kernels.sh).
// Entry points are extern "C" so the host finds them by name (org.gphash.cuda.Kernels).
#include "gphash/batch_kernel.cuh"
#include "gphash/cache_load.cuh"
#include "gphash/recovery_kernel.cuh"
#include "gphash/rehash_kernel.cuh"

using gphash::BatchParams;
using gphash::CacheParams;
using gphash::LoadParams;
using gphash::ScanParams;
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
