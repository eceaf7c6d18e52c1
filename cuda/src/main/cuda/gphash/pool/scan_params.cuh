// Parameters of the whole-table kernels (recovery and resize): which level, and where counts go.
#pragma once
#include <cstdint>
#include "../core/table_params.cuh"

namespace gphash {

struct ScanParams {
    int64_t depth;            // the level scanned (0 = top)
    uint64_t counters;        // uint64_t[kScanCounterCount]
    uint64_t retired;         // uint64_t[retired_capacity]: blocks a resize unlinked
    uint64_t retired_capacity;
    // Value heap chunks sorted by offset, for marking used blocks (recovery).
    uint64_t chunk_offset;    // uint64_t[chunks]
    uint64_t chunk_length;    // uint64_t[chunks]
    uint64_t chunk_first;     // uint64_t[chunks]: number of the chunk's first block
    int64_t chunks;
    int64_t value_stride;
    uint64_t bitmap;          // uint64_t words, one bit per block, set = in use
    int64_t mode;             // ScanMode bits
    uint64_t segment_class;   // kScanByClass: uint32_t[chunks], each segment's class (kNoSegmentClass: none yet)
};

// How recovery's kernels run: recovery judges the whole table before it writes anything.
enum ScanMode : int {
    kScanJudgeOnly = 1,   // recover_level counts what it would clear and writes nothing
    kScanValidOnly = 2,   // mark_level marks only items that are their key's valid item
    kScanByClass = 4      // format 3: the chunks are the heap's segments, the blocks their 16-byte units,
                          // and mark_level records each segment's class from its items' words
};

// A segment no item's block starts in (kScanByClass).
constexpr uint32_t kNoSegmentClass = 0xFFFFFFFFu;

enum ScanCounter : int {
    kInsertCleared = 0,
    kTornCleared = 1,
    kDuplicatesCleared = 2,
    kItems = 3,
    kBadOffsets = 4,
    kSharedBlocks = 5,
    kMoved = 6,
    kUnplaced = 7,
    kScanRetired = 8,
    kOtherClasses = 9,    // kScanByClass: items whose class is not that of another block in their segment
    kScanCounterCount = 16
};

__device__ __forceinline__ void scan_count(const ScanParams& s, ScanCounter c, uint32_t lanes_true) {
    const uint32_t n = __popc(lanes_true);
    if (lane_id() == 0 && n != 0) {
        atomicAdd(reinterpret_cast<unsigned long long*>(s.counters) + c, static_cast<unsigned long long>(n));
    }
}

__device__ __forceinline__ uint64_t slot_of(const TableParams& t, int depth, uint64_t index) {
    return t.level_offset[depth] + (index / t.slots) * t.bucket_size + (index % t.slots) * t.slot_size;
}

__device__ __forceinline__ uint64_t slots_at(const TableParams& t, int depth) {
    return (1ull << (t.top_log2 - depth)) * static_cast<uint64_t>(t.slots);
}

}  // namespace gphash
