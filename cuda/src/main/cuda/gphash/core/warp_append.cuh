// Appending to a list from a warp: the lanes that take part are counted with one atomic per warp,
// and each gets its own index in the list (in lane order).
#pragma once
#include <cstdint>
#include "table_params.cuh"

namespace gphash {

// Adds the number of lanes with `take` to `count` with one atomic; returns each such lane's index,
// counting from the value `count` had. All lanes of the warp must call.
__device__ __forceinline__ unsigned long long warp_append(unsigned long long* count, bool take) {
    const uint32_t takers = __ballot_sync(kFullMask, take);
    if (takers == 0) {
        return 0;
    }
    const int leader = __ffs(takers) - 1;
    unsigned long long base = 0;
    if (lane_id() == leader) {
        base = atomicAdd(count, static_cast<unsigned long long>(__popc(takers)));
    }
    base = __shfl_sync(kFullMask, base, leader);  // from the lane that added
    return base + __popc(takers & lanes_below());
}

}  // namespace gphash
