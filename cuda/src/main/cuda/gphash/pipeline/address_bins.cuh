// Address order for a list of pool accesses without a full sort: entries are binned by the high bits
// of their pool offset (at most kAddressBins bins over the pool, e.g. 64 KiB bins for a 4 GiB pool),
// counted while the list is built, the counts scanned, and each entry scattered into its bin. Order
// within a bin is arbitrary. What the PCIe link needs is that the accesses in flight at any moment
// fall within a window far smaller than the address-translation reach (about 512 MiB, docs/FACTS.md);
// warps issue a binned list roughly in order, so the window is a few bins wide.
#pragma once
#include <cstdint>
#include "pipe_params.cuh"

namespace gphash {

// Puts (pool offset, group) at place `at` of the unsorted list, whose places the caller knows
// without counting, and counts its bin.
__device__ __forceinline__ void bin_place(const PipeParams& p, uint64_t at, uint64_t offset, uint32_t e) {
    arr<uint64_t>(p.unsorted_off)[at] = offset;
    arr<uint32_t>(p.unsorted_ent)[at] = e;
    atomicAdd(arr<unsigned int>(p.bins) + (offset >> p.address_shift), 1u);
}

// Appends (pool offset, group) to the unsorted list for lanes with `take`, counting its bin.
// All lanes of the warp must call.
__device__ __forceinline__ void bin_append(const PipeParams& p, PipeCounter count, bool take, uint64_t offset,
                                           uint32_t e) {
    const uint32_t at = warp_append(pipe_counters(p) + count, take);
    if (take) {
        bin_place(p, at, offset, e);
    }
}

// One thread per unsorted entry: into its bin of `sorted`. With `positions`, the entry's place in
// `sorted` is also recorded per group.
__device__ void bin_scatter(const PipeParams& p, PipeCounter count, uint32_t* sorted, uint32_t* positions) {
    const uint64_t n = pipe_count(p, count);
    for (uint64_t i = global_thread(); i < n; i += global_threads()) {
        const uint64_t bin = arr<const uint64_t>(p.unsorted_off)[i] >> p.address_shift;
        const uint32_t e = arr<const uint32_t>(p.unsorted_ent)[i];
        const uint32_t at = arr<const uint32_t>(p.bin_start)[bin] + atomicAdd(arr<unsigned int>(p.bin_fill) + bin, 1u);
        sorted[at] = e;
        if (positions != nullptr) {
            positions[e] = at;
        }
    }
}

}  // namespace gphash
