// The GPU engine's kernels, one translation unit so they ship as one fatbin (cuda/build-kernels.sh).
// Entry points are extern "C" so the host finds them by name (org.gphash.cuda.Kernels).
#include "gphash/batch_kernel.cuh"
#include "gphash/recovery_kernel.cuh"
#include "gphash/rehash_kernel.cuh"

using gphash::BatchParams;
using gphash::ScanParams;
using gphash::TableParams;

extern "C" __global__ void gphash_batch(TableParams t, BatchParams b) { gphash::run_batch(t, b); }

extern "C" __global__ void gphash_count_writes(BatchParams b) { gphash::count_writes(b); }

extern "C" __global__ void gphash_assign_blocks(BatchParams b, const uint64_t* reserved) {
    gphash::assign_blocks(b, reserved);
}

extern "C" __global__ void gphash_recover_level(TableParams t, ScanParams s) { gphash::recover_level(t, s); }

extern "C" __global__ void gphash_mark_level(TableParams t, ScanParams s) { gphash::mark_level(t, s); }

extern "C" __global__ void gphash_rehash_bottom(TableParams t, ScanParams s) { gphash::rehash_bottom(t, s); }

extern "C" __global__ void gphash_finish_device_batch(BatchParams b) { gphash::finish_device_batch(b); }

extern "C" __global__ void gphash_group_batch(TableParams t, BatchParams b) { gphash::group_batch(t, b); }
