// The value heap's free space in GPU memory, authoritative while the engine runs the v2 pipeline
// (org.gphash.cuda.pipeline.DeviceHeap), in one of two forms by the pool's format: format 2's one
// bitmap of blocks of one stride (heap_bitmap.cuh), format 3's segments of size classes
// (heap_segments.cuh). One struct for both, so that every kernel that takes or frees blocks has one
// signature; `segmented` says which form the fields hold (the same for every thread of a launch).
// Mirrors org.gphash.cuda.runtime.KernelParams.HEAP byte for byte.
#pragma once
#include <cstdint>

namespace gphash {

struct HeapParams {
    // Format 2 (heap_bitmap.cuh); format 3 uses `bitmap` and `words` for its units' bitmap.
    uint64_t bitmap;        // uint64_t[words], bit set = block in use (padding past the last block set)
    uint64_t words;
    uint64_t chunk_offset;  // uint64_t[chunks], ascending
    uint64_t chunk_length;  // uint64_t[chunks]
    uint64_t chunk_first;   // uint64_t[chunks]: number of the chunk's first block
    uint64_t chunks;
    uint64_t stride;        // bytes per block
    uint64_t free_prefix;   // uint32_t[words]: free blocks in the words before (scanned per batch)
    uint64_t cursor;        // unsigned long long: the word the last small take stopped in (next fit; 0 after a push)
    // Format 3 (heap_segments.cuh).
    uint64_t segmented;     // 1: format 3's segments, 0: format 2's bitmap
    uint64_t segments;
    uint64_t seg_offset;    // uint64_t[segments], ascending
    uint64_t seg_class;     // int32_t[segments]: the class of the segment's blocks, -1 free, -2 inside a run after its first
    uint64_t seg_used;      // uint32_t[segments]: its blocks in use
    uint64_t free_stack;    // uint32_t[segments]: the free segments, entries below state[kSegTop]
    uint64_t seg_state;     // unsigned long long[kSegStateWords] (heap_segments.cuh)
    uint64_t class_table;   // uint32_t[2 * kValueClassCount]: each class's block bytes, then its blocks per segment
    uint64_t take_class;    // the class every value write of a batch takes (the pool's: issue 53, step 3b)
    uint64_t seg_room;      // uint32_t[segments]: segments from this one to its region's end (a run stays in one region)
};

}  // namespace gphash
