// Format 3's value heap in GPU memory (heap_params.cuh), as org.gphash.table.SegmentHeap keeps it:
// segments of 64 KiB, each holding blocks of one size class or free, and one bit per 16-byte unit,
// set where a block in use starts (the close record's bitmap: segment s holds words 64 s to 64 s + 63).
// Blocks of any class are found and freed by the same code, so a segment a class emptied goes back to
// the free segments and any class may take it next (issue 53, step 3b; the plan in
// docs/lab/2026-11-29-format-3-plan.md, "3b refined").
//
// A batch's take, three steps, each done everywhere before the next:
//   held    a warp per segment of the take's class with room, visited from the cursor (the segment
//           the last take ended in): it claims room by an atomic add on the batch's claim counter
//           and takes min(its room, wanted - claim) blocks, each written at blocks[claim + rank];
//           warps stop once the class's room at the start (held free, which nothing changes
//           meanwhile) or the want is all claimed, so a load, whose room is the one segment at the
//           cursor, reads one segment;
//   plan    one thread: what the held segments gave, the free segments the rest needs (popped off
//           the free stack, lowest offsets first), the counts;
//   fresh   a thread per word and per block of the popped segments: their class, bits and blocks.
// Blocks come in segment order from the cursor, not in address order; a write's lines are whole
// blocks either way. A free clears the block's bit, and a warp's frees then count together; the last
// free of a segment gives it back to the free stack. The host derives the free blocks of the pool's
// class from the pipeline's counters (taken, freed) as before (DeviceSegmentHeap).
#pragma once
#include <cstdint>

#include "../core/value_classes.cuh"
#include "../core/warp.cuh"
#include "heap_params.cuh"

namespace gphash {

constexpr uint64_t kSegmentBytes = 65536;
constexpr uint64_t kHeapUnitBytes = 16;
// Words of the units' bitmap a segment has: kSegmentBytes / kHeapUnitBytes / 64, two a lane.
constexpr uint32_t kSegmentWords = 64;

// HeapParams::seg_state, unsigned long long each.
constexpr int kSegTop = 0;          // free segments on the stack
constexpr int kSegCursor = 1;       // the segment the last take ended in (an index)
constexpr int kSegClaimed = 2;      // room claimed by the held step of the batch (0 between batches)
constexpr int kSegFreshFrom = 3;    // the plan: the stack's first entry popped
constexpr int kSegFreshCount = 4;   //           segments popped
constexpr int kSegFreshBlocks = 5;  //           blocks taken from them
constexpr int kSegHeldTaken = 6;    //           blocks the held step took (their entries come first)
constexpr int kSegHeldFree = 8;     // free blocks in the segments each class holds, kValueClassCount of them
constexpr int kSegStateWords = kSegHeldFree + kValueClassCount;

__device__ __forceinline__ unsigned long long* seg_state(const HeapParams& h) {
    return reinterpret_cast<unsigned long long*>(h.seg_state);
}

__device__ __forceinline__ uint32_t seg_block_bytes(const HeapParams& h, int c) {
    return reinterpret_cast<const uint32_t*>(h.class_table)[c];
}

__device__ __forceinline__ uint32_t seg_blocks_per_segment(const HeapParams& h, int c) {
    return reinterpret_cast<const uint32_t*>(h.class_table)[kValueClassCount + c];
}

// The bits of unit word w (0 to 63) of a segment where its blocks 0 to blocks - 1 start, each
// `units` 16-byte units long.
__device__ __forceinline__ uint64_t seg_start_mask(uint32_t w, uint32_t units, uint32_t blocks) {
    const uint32_t lo = w * 64;
    uint64_t mask = 0;
    for (uint32_t k = (lo + units - 1) / units, u = k * units; u < lo + 64 && k < blocks; u += units, ++k) {
        mask |= 1ull << (u - lo);
    }
    return mask;
}

// This lane's value summed over the lanes below it.
__device__ __forceinline__ uint32_t warp_exclusive_sum(uint32_t v) {
    uint32_t sum = v;
    for (int d = 1; d < kWarpSize; d <<= 1) {
        const uint32_t o = __shfl_up_sync(kFullMask, sum, d);
        if (lane_id() >= d) {
            sum += o;
        }
    }
    return sum - v;
}

// The held step, `wanted` blocks of HeapParams::take_class, by warps `warp` = first, first + step, ...
// (the grid's, or one block's in a launch that also does other work). Every lane of a warp calls it.
__device__ void seg_take_held(const HeapParams& h, uint64_t wanted, uint64_t* blocks, unsigned long long* short_count,
                              uint64_t first, uint64_t step) {
    const int c = static_cast<int>(h.take_class);
    unsigned long long* st = seg_state(h);
    const uint64_t limit = min(static_cast<uint64_t>(wanted), static_cast<uint64_t>(st[kSegHeldFree + c]));
    if (limit == 0 || h.segments == 0) {
        return;
    }
    const uint32_t per = seg_blocks_per_segment(h, c);
    const uint32_t units = seg_block_bytes(h, c) / kHeapUnitBytes;
    const int lane = lane_id();
    const uint64_t start = st[kSegCursor] % h.segments;
    volatile unsigned long long* claimed = st + kSegClaimed;
    const auto* cls = reinterpret_cast<const int32_t*>(h.seg_class);
    auto* used = reinterpret_cast<uint32_t*>(h.seg_used);
    for (uint64_t i = first; i < h.segments; i += step) {
        uint64_t s = start + i;
        if (s >= h.segments) {
            s -= h.segments;
        }
        unsigned long long old = 0;
        uint32_t n = 0;
        int stop = 0;
        if (lane == 0) {
            if (*claimed >= limit) {
                stop = 1;
            } else if (cls[s] == c && used[s] < per) {
                const uint32_t room = per - used[s];
                old = atomicAdd(const_cast<unsigned long long*>(claimed), static_cast<unsigned long long>(room));
                n = old < wanted ? static_cast<uint32_t>(min(static_cast<uint64_t>(room), static_cast<uint64_t>(wanted - old))) : 0;
            }
        }
        if (__shfl_sync(kFullMask, stop, 0)) {
            break;
        }
        n = __shfl_sync(kFullMask, n, 0);
        if (n == 0) {
            continue;
        }
        old = __shfl_sync(kFullMask, old, 0);
        // Lane l holds words 2l and 2l + 1 of the segment: its free block starts, ranked across lanes.
        auto* bits = reinterpret_cast<uint64_t*>(h.bitmap) + s * kSegmentWords + 2 * lane;
        const uint64_t w0 = bits[0];
        const uint64_t w1 = bits[1];
        uint64_t f0 = seg_start_mask(2 * lane, units, per) & ~w0;
        uint64_t f1 = seg_start_mask(2 * lane + 1, units, per) & ~w1;
        const uint32_t mine = __popcll(f0) + __popcll(f1);
        uint32_t r = warp_exclusive_sum(mine);
        const uint32_t total = __shfl_sync(kFullMask, r + mine, kWarpSize - 1);
        const uint64_t base = reinterpret_cast<const uint64_t*>(h.seg_offset)[s] + 2 * lane * 64 * kHeapUnitBytes;
        uint64_t t0 = 0;
        uint64_t t1 = 0;
        for (; f0 != 0 && r < n; f0 &= f0 - 1, ++r) {
            const int b = __ffsll(static_cast<long long>(f0)) - 1;
            t0 |= 1ull << b;
            blocks[old + r] = base + b * kHeapUnitBytes;
        }
        for (; f1 != 0 && r < n; f1 &= f1 - 1, ++r) {
            const int b = __ffsll(static_cast<long long>(f1)) - 1;
            t1 |= 1ull << b;
            blocks[old + r] = base + (64 + b) * kHeapUnitBytes;
        }
        bits[0] = w0 | t0;
        bits[1] = w1 | t1;
        if (lane == 0) {
            used[s] += n;
            if (old + n >= wanted) {
                st[kSegCursor] = s;  // the take ends here: the next begins here
            }
            if (total < n) {
                atomicAdd(short_count, static_cast<unsigned long long>(n - total));  // counts and bits disagree: a bug
            }
        }
    }
}

// The plan step, one thread, after the held step everywhere.
__device__ void seg_take_plan(const HeapParams& h, uint64_t wanted, unsigned long long* taken,
                              unsigned long long* short_count) {
    const int c = static_cast<int>(h.take_class);
    unsigned long long* st = seg_state(h);
    const uint64_t per = seg_blocks_per_segment(h, c);
    const uint64_t held = min(static_cast<uint64_t>(st[kSegClaimed]), wanted);
    const uint64_t rest = wanted - held;
    const uint64_t top = st[kSegTop];
    const uint64_t popped = per == 0 ? 0 : min((rest + per - 1) / per, top);
    const uint64_t fresh = min(rest, popped * per);
    st[kSegHeldTaken] = held;
    st[kSegFreshFrom] = top - popped;
    st[kSegFreshCount] = popped;
    st[kSegFreshBlocks] = fresh;
    st[kSegTop] = top - popped;
    st[kSegHeldFree + c] = st[kSegHeldFree + c] - held + (popped * per - fresh);
    st[kSegClaimed] = 0;
    if (popped != 0) {
        // The last segment popped is filled last, and keeps the room: the next take begins there.
        st[kSegCursor] = reinterpret_cast<const uint32_t*>(h.free_stack)[top - popped];
    }
    *taken += held + fresh;
    if (held + fresh < wanted) {
        *short_count += wanted - held - fresh;  // the host grows the heap first: never
    }
}

// The fresh step, threads `first`, first + step, ... : the popped segments' classes, counts and bits,
// and their blocks into blocks[held taken ...], segment j of the plan being stack entry from + count - 1 - j.
__device__ void seg_take_fresh(const HeapParams& h, uint64_t* blocks, uint64_t first, uint64_t step) {
    const unsigned long long* st = seg_state(h);
    const uint64_t popped = st[kSegFreshCount];
    if (popped == 0) {
        return;
    }
    const int c = static_cast<int>(h.take_class);
    const uint64_t per = seg_blocks_per_segment(h, c);
    const uint32_t bytes = seg_block_bytes(h, c);
    const uint64_t fresh = st[kSegFreshBlocks];
    const uint64_t held = st[kSegHeldTaken];
    const auto* stack = reinterpret_cast<const uint32_t*>(h.free_stack) + st[kSegFreshFrom] + popped - 1;
    for (uint64_t t = first; t < popped * kSegmentWords; t += step) {
        const uint64_t j = t / kSegmentWords;
        const uint32_t w = static_cast<uint32_t>(t % kSegmentWords);
        const uint32_t s = *(stack - j);
        const uint32_t n = static_cast<uint32_t>(min(per, fresh - j * per));
        reinterpret_cast<uint64_t*>(h.bitmap)[static_cast<uint64_t>(s) * kSegmentWords + w] =
                seg_start_mask(w, bytes / kHeapUnitBytes, n);
        if (w == 0) {
            reinterpret_cast<int32_t*>(h.seg_class)[s] = c;
            reinterpret_cast<uint32_t*>(h.seg_used)[s] = n;
        }
    }
    for (uint64_t q = first; q < fresh; q += step) {
        const uint32_t s = *(stack - q / per);
        blocks[held + q] = reinterpret_cast<const uint64_t*>(h.seg_offset)[s] + (q % per) * bytes;
    }
}

// A free, in two parts, so that a warp's frees count together: 2^20 frees each adding to their
// segment's count and their class's room one by one queued on those words (a fifth of an update's
// GPU time, most of it on the class's one word).
//
// Part one, a lane's own: clears the bit of the block at pool offset `off`. Returns its segment, or -1
// where `off` is no block in use (a bug: counted by the caller).
__device__ __forceinline__ int64_t seg_clear(const HeapParams& h, uint64_t off) {
    const auto* offset = reinterpret_cast<const uint64_t*>(h.seg_offset);
    if (h.segments == 0 || off < offset[0]) {
        return -1;
    }
    int64_t lo = 0;
    int64_t hi = static_cast<int64_t>(h.segments) - 1;
    while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (offset[mid] <= off) lo = mid; else hi = mid - 1;
    }
    const uint64_t within = off - offset[lo];
    const int c = reinterpret_cast<const int32_t*>(h.seg_class)[lo];
    if (c < 0 || within >= kSegmentBytes) {
        return -1;
    }
    const uint32_t bytes = seg_block_bytes(h, c);
    if (within % bytes != 0 || within / bytes >= seg_blocks_per_segment(h, c)) {
        return -1;
    }
    const uint64_t unit = within / kHeapUnitBytes;
    const unsigned long long bit = 1ull << (unit & 63);
    auto* word = reinterpret_cast<unsigned long long*>(h.bitmap) + static_cast<uint64_t>(lo) * kSegmentWords + (unit >> 6);
    return (atomicAnd(word, ~bit) & bit) != 0 ? lo : -1;
}

// Part two, the whole warp (every lane calls it; `segment` is part one's, -1 for a lane that freed
// nothing): each segment's count falls by its frees in one atomic, a segment left empty goes back to
// the free stack (free for any class: no take runs in the launch, frees come after every take and
// read of a batch), and each class's room changes by one atomic.
__device__ __forceinline__ void seg_count_frees(const HeapParams& h, int64_t segment) {
    const unsigned active = __ballot_sync(kFullMask, segment >= 0);
    if (segment < 0) {
        return;
    }
    auto* cls = reinterpret_cast<int32_t*>(h.seg_class);
    const int c = cls[segment];
    const unsigned same_segment = __match_any_sync(active, static_cast<unsigned long long>(segment));
    const uint32_t k = __popc(same_segment);
    int delta = 0;
    unsigned long long* st = seg_state(h);
    if (lane_id() == __ffs(same_segment) - 1) {
        delta = static_cast<int>(k);
        if (atomicSub(reinterpret_cast<uint32_t*>(h.seg_used) + segment, k) == k) {
            delta -= static_cast<int>(seg_blocks_per_segment(h, c));  // its room leaves the class
            cls[segment] = -1;
            reinterpret_cast<uint32_t*>(h.free_stack)[atomicAdd(st + kSegTop, 1ull)] = static_cast<uint32_t>(segment);
        }
    }
    const unsigned same_class = __match_any_sync(active, c);
    const int sum = __reduce_add_sync(same_class, delta);
    if (lane_id() == __ffs(same_class) - 1 && sum != 0) {
        atomicAdd(st + kSegHeldFree + c, static_cast<unsigned long long>(static_cast<long long>(sum)));
    }
}

}  // namespace gphash
