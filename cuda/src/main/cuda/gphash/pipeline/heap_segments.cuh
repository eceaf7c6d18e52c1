// Format 3's value heap in GPU memory (heap_params.cuh), as org.gphash.table.SegmentHeap keeps it:
// segments of 64 KiB, each holding blocks of one size class or free, and one bit per 16-byte unit,
// set where a block in use starts (the close record's bitmap: segment s holds words 64 s to 64 s + 63).
// Blocks of any class are found and freed by the same code, so a segment a class emptied goes back to
// the free segments and any class may take it next (issue 53, step 3b; the plan in
// docs/lab/2026-11-29-format-3-plan.md, "3b refined").
//
// A batch's take, each step done everywhere before the next:
//   want    (values of many lengths) each value write's class, and its rank among the batch's writes
//           of that class, counted per class (a batch of values of the value size skips it: every
//           write is HeapParams::take_class's);
//   plan    a thread per class: where each class's blocks go in the block list, and what the held
//           step looks for: min(wanted, the class's held free room);
//   held    a warp per segment whose class looks for room, visited from the cursor (the segment the
//           last take found room in): it claims room by an atomic add on the class's claim and takes
//           min(its room, wanted - claim) blocks, written at the class's part of the block list;
//           warps stop once no class's room at the start (held free, which nothing changes
//           meanwhile) is left unclaimed, so a load, whose room is the one segment at the cursor,
//           reads one segment;
//   plan    a thread per class: what the held segments gave, the free segments the rest needs
//           (popped off the free stack, lowest offsets first), the counts;
//   fresh   a thread per word and per block of the popped segments: their class, bits and blocks.
// Blocks over 8 KiB (classes with no blocks per segment in the class table) take a run of whole
// segments each, inside one region, as SizeClassHeap gives them: the runs step, after the first plan,
// packs such writes into the stretches of free segments in one pass from the heap's start, marks each
// run's first segment with the class (a bit at its first unit, one block in use) and the others as its
// tail, and makes the free stack again of the segments still free; a free of such a block gives every
// segment of its run back. The host places the same writes the same way before the batch and grows the
// heap where they would not fit (DeviceSegmentHeap.placeRuns).
// Blocks come in segment order from the cursor, not in address order; a write's lines are whole
// blocks either way. A free clears the block's bit, and a warp's frees then count together; the last
// free of a segment gives it back to the free stack. The host derives the free blocks of the pool's
// class from the pipeline's counters (taken, freed) as before (DeviceSegmentHeap).
#pragma once
#include <cstdint>

#include "../core/value_classes.cuh"
#include "../core/warp.cuh"
#include "heap_params.cuh"
#include "segment_starts.cuh"

namespace gphash {


// HeapParams::seg_state, unsigned long long each: scalars, then arrays indexed by class.
constexpr int kSegTop = 0;         // free segments on the stack
constexpr int kSegCursor = 1;      // the segment the last take ended in (an index)
constexpr int kSegOpen = 2;        // classes whose held room is not yet all claimed (the held step stops at 0)
constexpr int kSegTopBefore = 3;   // the plan: the stack's top before it popped
constexpr int kSegPopped = 4;      //           segments popped
constexpr int kSegFresh = 5;       //           blocks taken from them
constexpr int kSegFoundRoom = 6;   // 1 + a segment the held step found room in (0: none); the plan moves it to the
                                   // cursor, which stays put while the held step runs: its warps all map their
                                   // indices to segments from it, and a cursor moved meanwhile sent two warps to one
constexpr int kSegRunsFreed = 7;   // runs of the take class freed, ever: each is a free run of its length
                                   // again, which the host adds to its lower bound of them (DeviceSegmentHeap)
constexpr int kSegHeldFree = 8;                                  // free blocks in the segments each class holds
constexpr int kSegWanted = kSegHeldFree + kValueClassCount;      // the batch's writes of each class (0 between batches)
constexpr int kSegBase = kSegWanted + kValueClassCount;          // where each class's blocks start in the block list
constexpr int kSegClaimed = kSegBase + kValueClassCount;         // room the held step claimed (0 between batches)
constexpr int kSegLimit = kSegClaimed + kValueClassCount;        // min(wanted, held free): what the held step looks for
constexpr int kSegHeldTaken = kSegLimit + kValueClassCount;      // blocks the held step took
constexpr int kSegPoppedAt = kSegHeldTaken + kValueClassCount;   // segments popped for the classes before (129 words)
constexpr int kSegFreshAt = kSegPoppedAt + kValueClassCount + 1; // fresh blocks of the classes before (129 words)
constexpr int kSegStateWords = kSegFreshAt + kValueClassCount + 1;
// HeapParams::seg_class of a segment no class holds, and of one inside a run after its first
// (org.gphash.table.HeapSegments.FREE, RUN_TAIL; the host's records give a tail as free).
constexpr int32_t kSegFree = -1;
constexpr int32_t kSegRunTail = -2;
// A value write's class and its rank among the batch's writes of that class, in one word (vclass).
constexpr int kSegRankBits = 25;
constexpr uint32_t kSegRankMask = (1u << kSegRankBits) - 1;

__device__ __forceinline__ unsigned long long* seg_state(const HeapParams& h) {
    return reinterpret_cast<unsigned long long*>(h.seg_state);
}

__device__ __forceinline__ uint32_t seg_block_bytes(const HeapParams& h, int c) {
    return reinterpret_cast<const uint32_t*>(h.class_table)[c];
}

__device__ __forceinline__ uint32_t seg_blocks_per_segment(const HeapParams& h, int c) {
    return reinterpret_cast<const uint32_t*>(h.class_table)[kValueClassCount + c];
}

// Segments a block of class c takes: 1 for classes that share segments, the run's length for larger ones.
__device__ __forceinline__ uint32_t seg_run_length(const HeapParams& h, int c) {
    return static_cast<uint32_t>((seg_block_bytes(h, c) + kSegmentBytes - 1) / kSegmentBytes);
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

// The want step, for a batch whose writes have classes of their own (values of many lengths): a
// lane's write of class `c` (-1: the lane has none) is counted, and gets its rank among the batch's
// writes of that class, the warp's writes of one class counted by one atomic. Every lane calls it.
__device__ __forceinline__ uint32_t seg_want(const HeapParams& h, int c) {
    const unsigned active = __ballot_sync(kFullMask, c >= 0);
    if (c < 0) {
        return 0;
    }
    const unsigned peers = __match_any_sync(active, c);
    const int leader = __ffs(peers) - 1;
    unsigned long long first = 0;
    if (lane_id() == leader) {
        first = atomicAdd(seg_state(h) + kSegWanted + c, static_cast<unsigned long long>(__popc(peers)));
    }
    first = __shfl_sync(peers, first, leader);
    return static_cast<uint32_t>(first) + __popc(peers & lanes_below());
}

// The first plan step, one block of kValueClassCount threads (a thread per class): `wanted` writes
// all of HeapParams::take_class where `classes_given` is false (values of the value size), else the
// want step's counts; each class's place in the block list, what the held step looks for, and the
// classes it looks for.
__device__ void seg_take_want_plan(const HeapParams& h, uint64_t wanted, bool classes_given) {
    __shared__ unsigned long long base[kValueClassCount];
    __shared__ int open;
    const int c = static_cast<int>(threadIdx.x);
    unsigned long long* st = seg_state(h);
    if (c == 0) {
        open = 0;
    }
    __syncthreads();
    unsigned long long w = 0;
    if (c < kValueClassCount) {
        if (!classes_given) {
            st[kSegWanted + c] = c == static_cast<int>(h.take_class) ? wanted : 0;
        }
        w = st[kSegWanted + c];
        base[c] = w;
        const unsigned long long limit = min(w, st[kSegHeldFree + c]);
        st[kSegLimit + c] = limit;
        st[kSegClaimed + c] = 0;
        if (limit != 0) {
            atomicAdd(&open, 1);
        }
    }
    __syncthreads();
    if (c == 0) {
        // The scan over shared memory: a thread's serial walk over the state's words in global memory
        // was most of a fixed-size batch's take (0.3 ms of 5.6 for an update of 2^20).
        unsigned long long sum = 0;
        for (int k = 0; k < kValueClassCount; ++k) {
            const unsigned long long x = base[k];
            base[k] = sum;
            sum += x;
        }
        st[kSegOpen] = static_cast<unsigned long long>(open);
    }
    __syncthreads();
    if (c < kValueClassCount) {
        st[kSegBase + c] = base[c];
    }
}

// The runs step's placing (seg_take_runs, one thread): a stretch of `run` free segments from segment
// `start`, inside one region, takes the blocks of the classes still `pending`, largest class first, while
// one fits in what is left; each is marked (its first segment the class, a bit at its first unit, one
// block in use; the rest its tail) and goes to its class's part of the block list. Returns 1 once no
// class is pending.
__device__ int seg_place_runs(const HeapParams& h, uint64_t* blocks, unsigned long long* pending, uint64_t start,
                              uint64_t run) {
    unsigned long long* st = seg_state(h);
    auto* cls = reinterpret_cast<int32_t*>(h.seg_class);
    auto* used = reinterpret_cast<uint32_t*>(h.seg_used);
    const auto* offset = reinterpret_cast<const uint64_t*>(h.seg_offset);
    auto* bits = reinterpret_cast<uint64_t*>(h.bitmap);
    bool left = false;
    for (int c = kValueClassCount - 1; c >= 0; --c) {
        if (pending[c] == 0) {
            continue;
        }
        const uint32_t k = seg_run_length(h, c);
        while (pending[c] != 0 && run >= k) {
            cls[start] = c;
            used[start] = 1;
            for (uint32_t j = 1; j < k; ++j) {
                cls[start + j] = kSegRunTail;
            }
            bits[start * kSegmentWords] |= 1ull;  // the block starts at the run's first unit
            blocks[st[kSegBase + c] + (st[kSegWanted + c] - pending[c])] = offset[start];
            --pending[c];
            start += k;
            run -= k;
        }
        left = left || pending[c] != 0;
    }
    return left ? 0 : 1;
}

// The runs step, one block of at least kValueClassCount threads (a multiple of 32), after the first
// plan and before the held step: the writes of classes whose blocks take runs of whole segments get
// runs of free segments inside one region, in one pass over the segments from the heap's start: the
// block reads a tile of segments at a time (whether each is free, whether its region ends there) into
// masks, and one thread walks the masks; each stretch of free segments it closes takes, largest class
// first, the blocks of the classes still wanted that fit in what is left of it. Each block goes to its
// class's part of the block list and the count to the class's claim, which the second plan reads as
// what the class got. DeviceSegmentHeap.placeRuns places them the same way on the host before the
// batch, and grows the heap where they would not all fit. Where any run was taken, the free stack is
// made again of the segments still free, the lowest on top.
__device__ void seg_take_runs(const HeapParams& h, uint64_t* blocks) {
    __shared__ int wanted;
    __shared__ int taken;
    __shared__ int all_placed;
    __shared__ unsigned long long pending[kValueClassCount];
    __shared__ unsigned free_mask[32];
    __shared__ unsigned end_mask[32];
    __shared__ unsigned long long free_count;
    __shared__ unsigned long long warp_count[32];
    __shared__ unsigned long long done;
    unsigned long long* st = seg_state(h);
    const int t = static_cast<int>(threadIdx.x);
    if (t == 0) {
        wanted = 0;
        taken = 0;
        all_placed = 0;
        free_count = 0;
        done = 0;
    }
    __syncthreads();
    if (t < kValueClassCount) {
        pending[t] = seg_blocks_per_segment(h, t) == 0 ? st[kSegWanted + t] : 0;
        if (pending[t] != 0) {
            atomicOr(&wanted, 1);
        }
    }
    __syncthreads();
    if (wanted == 0) {
        return;
    }
    auto* cls = reinterpret_cast<int32_t*>(h.seg_class);
    const auto* room = reinterpret_cast<const uint32_t*>(h.seg_room);
    const int warp = t / kWarpSize;
    const int warps = static_cast<int>(blockDim.x / kWarpSize);
    // Thread 0's walk: the stretch of free segments open so far.
    uint64_t start = 0;
    uint64_t run = 0;
    for (uint64_t first = 0; first < h.segments; first += blockDim.x) {
        const uint64_t s = first + t;
        const bool free = s < h.segments && cls[s] == kSegFree;
        const bool ends = s < h.segments && room[s] <= 1;  // its region ends here
        const unsigned f = __ballot_sync(kFullMask, free);
        const unsigned e = __ballot_sync(kFullMask, ends);
        if (lane_id() == 0) {
            free_mask[warp] = f;
            end_mask[warp] = e;
        }
        __syncthreads();
        if (t == 0) {
            for (int w = 0; w < warps && all_placed == 0; ++w) {
                const uint64_t base = first + static_cast<uint64_t>(w) * kWarpSize;
                const unsigned fw = free_mask[w];
                const unsigned ew = end_mask[w];
                if (fw == ~0u && ew == 0) {  // all free, no region ends: the stretch grows by the word
                    if (run == 0) {
                        start = base;
                    }
                    run += kWarpSize;
                    continue;
                }
                for (int i = 0; i < kWarpSize; ++i) {
                    if ((fw >> i) & 1u) {
                        if (run == 0) {
                            start = base + i;
                        }
                        ++run;
                    } else if (run != 0) {
                        all_placed = seg_place_runs(h, blocks, pending, start, run);
                        run = 0;
                    }
                    if (((ew >> i) & 1u) && run != 0) {
                        all_placed = seg_place_runs(h, blocks, pending, start, run);
                        run = 0;
                    }
                }
            }
        }
        __syncthreads();
        if (all_placed != 0) {
            break;
        }
    }
    if (t == 0 && run != 0 && all_placed == 0) {
        seg_place_runs(h, blocks, pending, start, run);
    }
    __syncthreads();
    if (t < kValueClassCount && seg_blocks_per_segment(h, t) == 0) {
        const unsigned long long got = st[kSegWanted + t] - pending[t];
        st[kSegClaimed + t] = got;
        if (got != 0) {
            atomicOr(&taken, 1);
        }
    }
    __syncthreads();
    if (taken == 0) {
        return;
    }
    unsigned long long mine = 0;
    for (uint64_t s = t; s < h.segments; s += blockDim.x) {
        mine += cls[s] == kSegFree ? 1 : 0;
    }
    atomicAdd(&free_count, mine);
    __syncthreads();
    const unsigned long long total = free_count;
    auto* stack = reinterpret_cast<uint32_t*>(h.free_stack);
    for (uint64_t first = 0; first < h.segments; first += blockDim.x) {
        const uint64_t s = first + t;
        const bool free = s < h.segments && cls[s] == kSegFree;
        const unsigned ballot = __ballot_sync(kFullMask, free);
        if (lane_id() == 0) {
            warp_count[warp] = __popc(ballot);
        }
        __syncthreads();
        unsigned long long below = done;
        for (int w = 0; w < warp; ++w) {
            below += warp_count[w];
        }
        if (free) {
            stack[total - 1 - (below + __popc(ballot & lanes_below()))] = static_cast<uint32_t>(s);
        }
        __syncthreads();
        if (t == 0) {
            for (int w = 0; w < warps; ++w) {
                done += warp_count[w];
            }
        }
        __syncthreads();
    }
    if (t == 0) {
        st[kSegTop] = total;
    }
}

// The whole warp takes the first `n` free blocks of segment s (class c) into list[0..n): lane l looks at
// words 2l and 2l + 1 of its bits, its free block starts ranked across lanes.
__device__ __forceinline__ void seg_take_from(const HeapParams& h, uint64_t* list, uint64_t s, int c, uint32_t n,
                                              unsigned long long* short_count) {
    const int lane = lane_id();
    const uint32_t per = seg_blocks_per_segment(h, c);
    const uint32_t units = seg_block_bytes(h, c) / kHeapUnitBytes;
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
        list[r] = base + b * kHeapUnitBytes;
    }
    for (; f1 != 0 && r < n; f1 &= f1 - 1, ++r) {
        const int b = __ffsll(static_cast<long long>(f1)) - 1;
        t1 |= 1ull << b;
        list[r] = base + (64 + b) * kHeapUnitBytes;
    }
    bits[0] = w0 | t0;
    bits[1] = w1 | t1;
    if (lane == 0) {
        reinterpret_cast<uint32_t*>(h.seg_used)[s] += n;
        seg_state(h)[kSegFoundRoom] = s + 1;  // where a take last found room: the next begins there
        if (total < n) {
            atomicAdd(short_count, static_cast<unsigned long long>(n - total));  // counts and bits disagree: a bug
        }
    }
    __syncwarp();
}

// The held step, by warps `first`, first + step, ... (the grid's, or in a launch that also does other
// work, its warps); every lane of a warp calls it. A warp takes blocks of its segment's class while that
// class's held room is not all claimed; the step ends once no class's is.
__device__ void seg_take_held(const HeapParams& h, uint64_t* blocks, unsigned long long* short_count, uint64_t first,
                              uint64_t step) {
    unsigned long long* st = seg_state(h);
    volatile unsigned long long* vst = st;
    if (vst[kSegOpen] == 0 || h.segments == 0) {
        return;
    }
    const int lane = lane_id();
    const uint64_t start = st[kSegCursor] % h.segments;
    const auto* cls = reinterpret_cast<const int32_t*>(h.seg_class);
    auto* used = reinterpret_cast<uint32_t*>(h.seg_used);
    // A lane looks at a segment each, 32 a warp step; the lanes whose segments hold room of one class
    // claim it together, one atomic on the class's claim for all of them: a warp per segment each with
    // its own atomic queued 32,768 of them on one word, most of a take's time (0.3-0.4 ms a batch of 2^20).
    for (uint64_t i0 = first * kWarpSize; i0 < h.segments; i0 += step * kWarpSize) {
        if (__shfl_sync(kFullMask, lane == 0 ? (vst[kSegOpen] == 0 ? 1 : 0) : 0, 0)) {
            break;
        }
        const uint64_t i = i0 + lane;
        uint64_t s = 0;
        int c = -1;
        uint32_t room = 0;
        if (i < h.segments) {
            s = start + i;
            if (s >= h.segments) {
                s -= h.segments;
            }
            c = cls[s];
            if (c >= 0) {
                const uint32_t per = seg_blocks_per_segment(h, c);
                const uint32_t u = used[s];
                if (u < per && vst[kSegClaimed + c] < st[kSegLimit + c]) {
                    room = per - u;
                }
            }
        }
        const unsigned active = __ballot_sync(kFullMask, room != 0);
        unsigned long long old = 0;
        uint32_t n = 0;
        if (room != 0) {
            const unsigned peers = __match_any_sync(active, c);
            const int leader = __ffs(peers) - 1;
            uint32_t below = 0;
            uint32_t total = 0;
            for (int j = 0; j < kWarpSize; ++j) {
                if ((peers >> j) & 1u) {
                    const uint32_t x = __shfl_sync(peers, room, j);
                    below += j < lane ? x : 0;
                    total += x;
                }
            }
            unsigned long long first_claim = 0;
            if (lane == leader) {
                const unsigned long long limit = st[kSegLimit + c];
                first_claim = atomicAdd(st + kSegClaimed + c, static_cast<unsigned long long>(total));
                if (first_claim < limit && first_claim + total >= limit) {
                    atomicAdd(st + kSegOpen, ~0ull);  // minus one: these lanes claim the class's last room
                }
            }
            old = __shfl_sync(peers, first_claim, leader) + below;
            const unsigned long long want = st[kSegWanted + c];
            n = old < want ? static_cast<uint32_t>(min(static_cast<unsigned long long>(room), want - old)) : 0;
        }
        // Then the whole warp takes each such segment's blocks in turn.
        for (unsigned todo = __ballot_sync(kFullMask, n != 0); todo != 0; todo &= todo - 1) {
            const int j = __ffs(todo) - 1;
            const uint64_t sj = __shfl_sync(kFullMask, s, j);
            const int cj = __shfl_sync(kFullMask, c, j);
            const unsigned long long oldj = __shfl_sync(kFullMask, old, j);
            const uint32_t nj = __shfl_sync(kFullMask, n, j);
            seg_take_from(h, blocks + st[kSegBase + cj] + oldj, sj, cj, nj, short_count);
        }
    }
}

// The second plan step, one block of kValueClassCount threads, after the held step everywhere: what
// the held segments gave each class, the free segments the rest needs (popped off the stack, lowest
// offsets first, the classes in order while there are any), the counts. Every class's want and
// claim go back to 0 for the next batch.
__device__ void seg_take_plan(const HeapParams& h, unsigned long long* taken, unsigned long long* short_count) {
    __shared__ unsigned long long need[kValueClassCount];
    __shared__ unsigned long long rest[kValueClassCount];
    __shared__ unsigned long long held[kValueClassCount];
    __shared__ unsigned long long per[kValueClassCount];
    __shared__ unsigned long long popped_at[kValueClassCount + 1];
    __shared__ unsigned long long fresh_at[kValueClassCount + 1];
    const int c = static_cast<int>(threadIdx.x);
    unsigned long long* st = seg_state(h);
    if (c < kValueClassCount) {
        const unsigned long long want = st[kSegWanted + c];
        held[c] = min(st[kSegClaimed + c], want);
        per[c] = seg_blocks_per_segment(h, c);
        st[kSegHeldTaken + c] = held[c];
        rest[c] = want - held[c];
        need[c] = per[c] == 0 ? 0 : (rest[c] + per[c] - 1) / per[c];
    }
    __syncthreads();
    if (c == 0) {
        // Serial over shared memory (each class's pops depend on the classes before), the state's
        // words written by every thread after.
        const unsigned long long top = st[kSegTop];
        unsigned long long popped = 0;
        unsigned long long fresh = 0;
        unsigned long long got = 0;
        unsigned long long missing = 0;
        for (int k = 0; k < kValueClassCount; ++k) {
            const unsigned long long p = min(need[k], top - popped);
            const unsigned long long f = min(rest[k], p * per[k]);
            popped_at[k] = popped;
            fresh_at[k] = fresh;
            got += held[k] + f;
            missing += rest[k] - f;
            need[k] = p;    // now: segments popped
            rest[k] = f;    // now: blocks taken from them
            popped += p;
            fresh += f;
        }
        popped_at[kValueClassCount] = popped;
        fresh_at[kValueClassCount] = fresh;
        st[kSegPoppedAt + kValueClassCount] = popped;
        st[kSegFreshAt + kValueClassCount] = fresh;
        st[kSegTopBefore] = top;
        st[kSegPopped] = popped;
        st[kSegFresh] = fresh;
        st[kSegTop] = top - popped;
        if (popped != 0) {
            // The last segment popped is filled last, and keeps the room: the next take begins there.
            st[kSegCursor] = reinterpret_cast<const uint32_t*>(h.free_stack)[top - popped];
        } else if (st[kSegFoundRoom] != 0) {
            st[kSegCursor] = st[kSegFoundRoom] - 1;
        }
        st[kSegFoundRoom] = 0;
        *taken += got;
        if (missing != 0) {
            *short_count += missing;  // the host grows the heap first: never
        }
    }
    __syncthreads();
    if (c < kValueClassCount) {
        st[kSegPoppedAt + c] = popped_at[c];
        st[kSegFreshAt + c] = fresh_at[c];
        if (per[c] != 0) {  // a class of runs holds no room (seg_take_runs took its blocks)
            st[kSegHeldFree + c] = st[kSegHeldFree + c] - held[c] + (need[c] * per[c] - rest[c]);
        }
        st[kSegWanted + c] = 0;
        st[kSegClaimed + c] = 0;
    }
}

// The class whose range of `at` (kValueClassCount + 1 ascending words from `at`) holds x.
__device__ __forceinline__ int seg_class_holding(const unsigned long long* at, unsigned long long x) {
    int lo = 0;
    int hi = kValueClassCount - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (at[mid] <= x) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// The fresh step, threads `first`, first + step, ...: the popped segments' classes, counts and bits,
// and their blocks into each class's part of the block list after what the held step took; popped
// segment j is stack entry top before - 1 - j.
__device__ void seg_take_fresh(const HeapParams& h, uint64_t* blocks, uint64_t first, uint64_t step) {
    const unsigned long long* st = seg_state(h);
    const uint64_t popped = st[kSegPopped];
    if (popped == 0) {
        return;
    }
    const uint64_t fresh = st[kSegFresh];
    const auto* stack = reinterpret_cast<const uint32_t*>(h.free_stack) + st[kSegTopBefore] - 1;
    for (uint64_t t = first; t < popped * kSegmentWords; t += step) {
        const uint64_t j = t / kSegmentWords;
        const uint32_t w = static_cast<uint32_t>(t % kSegmentWords);
        const int c = seg_class_holding(st + kSegPoppedAt, j);
        const uint64_t per = seg_blocks_per_segment(h, c);
        const uint64_t of_class = st[kSegFreshAt + c + 1] - st[kSegFreshAt + c];
        const uint64_t jj = j - st[kSegPoppedAt + c];
        const uint32_t s = *(stack - j);
        const uint32_t n = static_cast<uint32_t>(min(per, of_class - jj * per));
        reinterpret_cast<uint64_t*>(h.bitmap)[static_cast<uint64_t>(s) * kSegmentWords + w] =
                seg_start_mask(w, seg_block_bytes(h, c) / kHeapUnitBytes, n);
        if (w == 0) {
            reinterpret_cast<int32_t*>(h.seg_class)[s] = c;
            reinterpret_cast<uint32_t*>(h.seg_used)[s] = n;
        }
    }
    for (uint64_t q = first; q < fresh; q += step) {
        const int c = seg_class_holding(st + kSegFreshAt, q);
        const uint64_t per = seg_blocks_per_segment(h, c);
        const uint64_t qq = q - st[kSegFreshAt + c];
        const uint32_t s = *(stack - (st[kSegPoppedAt + c] + qq / per));
        blocks[st[kSegBase + c] + st[kSegHeldTaken + c] + qq] =
                reinterpret_cast<const uint64_t*>(h.seg_offset)[s] + (qq % per) * seg_block_bytes(h, c);
    }
}

// Where the block of a batch's value write of class `c` and rank `rank` among that class's is in the
// block list (after the take).
__device__ __forceinline__ uint64_t seg_block_index(const HeapParams& h, int c, uint32_t rank) {
    return seg_state(h)[kSegBase + c] + rank;
}

// A check of the heap's consistency (GpuTuning.logBatches): a thread per segment adds to out[0] the
// held segments whose block starts in use differ from their count, to out[1] those with a bit where
// no block of their class starts (a run's tail: any bit or count), to out[2] free segments with a bit or a count, to out[3] the free
// segments (the host compares it with the free stack's top).
__device__ void seg_check(const HeapParams& h, unsigned long long* out) {
    const auto* cls = reinterpret_cast<const int32_t*>(h.seg_class);
    const auto* used = reinterpret_cast<const uint32_t*>(h.seg_used);
    const auto* bits = reinterpret_cast<const uint64_t*>(h.bitmap);
    for (uint64_t s = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; s < h.segments;
         s += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
        const int c = cls[s];
        uint32_t starts = 0;
        uint32_t others = 0;
        for (uint32_t w = 0; w < kSegmentWords; ++w) {
            const uint64_t x = bits[s * kSegmentWords + w];
            const uint32_t per = c >= 0 ? seg_blocks_per_segment(h, c) : 0;
            const uint64_t m = c < 0 ? 0 : per == 0 ? (w == 0 ? 1ull : 0ull)  // a run: its first unit
                                                    : seg_start_mask(w, seg_block_bytes(h, c) / kHeapUnitBytes, per);
            starts += __popcll(x & m);
            others += __popcll(x & ~m);
        }
        if (c >= 0) {
            if (starts != used[s]) atomicAdd(out, 1ull);
            if (others != 0) atomicAdd(out + 1, 1ull);
        } else if (c == kSegRunTail) {
            if (others != 0 || used[s] != 0) atomicAdd(out + 1, 1ull);
        } else {
            if (others != 0 || used[s] != 0) atomicAdd(out + 2, 1ull);
            atomicAdd(out + 3, 1ull);
        }
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
    const uint32_t per = seg_blocks_per_segment(h, c);
    if (per == 0 ? within != 0 : (within % bytes != 0 || within / bytes >= per)) {
        return -1;  // a run's block starts at its first segment's first unit
    }
    const uint64_t unit = within / kHeapUnitBytes;
    const unsigned long long bit = 1ull << (unit & 63);
    auto* word = reinterpret_cast<unsigned long long*>(h.bitmap) + static_cast<uint64_t>(lo) * kSegmentWords + (unit >> 6);
    return (atomicAnd(word, ~bit) & bit) != 0 ? lo : -1;
}

// Part two, the whole warp (every lane calls it; `segment` is part one's, -1 for a lane that freed
// nothing): each segment's count falls by its frees in one atomic, a segment left empty goes back to
// the free stack (a run's block: all its segments) (free for any class: no take runs in the launch, frees come after every take and
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
        const uint32_t per = seg_blocks_per_segment(h, c);
        delta = per == 0 ? 0 : static_cast<int>(k);  // a class of runs holds no room
        if (atomicSub(reinterpret_cast<uint32_t*>(h.seg_used) + segment, k) == k) {
            delta -= static_cast<int>(per);  // its room leaves the class
            // A run's segments all go back (its tail's too); a shared segment is a run of one.
            const uint32_t run = per == 0 ? seg_run_length(h, c) : 1;
            const unsigned long long top = atomicAdd(st + kSegTop, static_cast<unsigned long long>(run));
            for (uint32_t j = 0; j < run; ++j) {
                cls[segment + j] = kSegFree;
                reinterpret_cast<uint32_t*>(h.free_stack)[top + j] = static_cast<uint32_t>(segment + j);
            }
            if (per == 0 && c == static_cast<int>(h.take_class)) {
                atomicAdd(st + kSegRunsFreed, 1ull);
            }
        }
    }
    const unsigned same_class = __match_any_sync(active, c);
    const int sum = __reduce_add_sync(same_class, delta);
    if (lane_id() == __ffs(same_class) - 1 && sum != 0) {
        atomicAdd(st + kSegHeldFree + c, static_cast<unsigned long long>(static_cast<long long>(sum)));
    }
}

}  // namespace gphash
