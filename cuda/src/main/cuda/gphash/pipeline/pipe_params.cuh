// The v2 batch pipeline's parameters (docs/DESIGN-GPU.md, "The GPU engine, v2"): one batch runs as a
// sequence of kernels on one stream, each a stage over the whole batch, so that every pool access of
// a stage can be issued in address order and everything else happens in GPU memory.
//
// Sizes that vary per batch (the operation count, the lengths of the lists stages build) live in
// device memory (PipeBatch, PipeCounter), so the launches of a batch depend only on its capacity
// class: grids are sized for the capacity and kernels stride over what the counts say.
// Mirrors org.gphash.cuda.pipeline.PipelineBuffers.params byte for byte (every field 8 bytes, little-endian).
#pragma once
#include <cstdint>
#include "../table/same_key_rules.cuh"
#include "../core/table_params.cuh"
#include "../core/warp_append.cuh"

namespace gphash {

// One batch, in device memory.
struct PipeBatch {
    uint64_t n;       // operations to run
    uint64_t kinds;   // uint8_t[]: OpKind ordinals, indexed by operation
    uint64_t keys;    // key_size bytes per operation
    uint64_t values;  // value_size bytes per operation (read by writes)
    uint64_t codes;   // uint8_t[]: outcome codes written
    uint64_t out;     // value_size bytes per operation: values found (GET) or replaced (RMW)
    uint64_t ops;     // uint32_t[n]: the operations to run (a rerun after a resize), or 0: 0..n-1
    uint64_t clock;   // the batch's sequence number: BktCache's LRU stamp and sampling salt (here, not in
                      // CacheParams, so that a captured graph of the stages serves every batch)
    uint64_t out_at;  // uint32_t[]: where in `out` each operation's value goes (a shard's part of a caller's
                      // batch: its position there), or 0: at the operation's own index
    uint64_t lengths;      // uint32_t[]: each operation's value length, at most value_size (format 3's values of
                           // any length, issue 53), or 0: every value has value_size bytes
    uint64_t out_lengths;  // uint32_t[]: the length of each value read, where `out` has it (the bytes after it
                           // left as they were), or 0: none wanted (a value shorter than value_size is then
                           // followed by zeros in `out`)
};

// Where each stage reads and writes. Per-operation arrays hold `capacity` entries; per-group arrays
// are indexed by the group's entry in the key table (`table_capacity` entries).
struct PipeParams {
    uint64_t batch;           // const PipeBatch*
    uint64_t capacity;        // operations the buffers hold (a power of two)
    uint64_t table_capacity;  // entries of the key table (a power of two, twice the capacity)
    // per operation, in batch order, then sorted by group (stable: batch order within a group)
    uint64_t sort_keys;       // uint32_t: group entry (sort input)
    uint64_t sort_vals;       // uint32_t: operation index (sort input)
    uint64_t sorted_entry;    // uint32_t: group entry at sorted position p (sort output)
    uint64_t sorted_op;       // uint32_t: operation at sorted position p
    uint64_t last_set;        // int32_t: inclusive max-scan of "p sets presence" (p or -1)
    uint64_t last_src;        // int32_t: inclusive max-scan of "p sets the value source" (p or -1)
    uint64_t vsrc;            // uint32_t: where position p's output value comes from (kVsrc*, or an operation)
    // per group entry
    uint64_t owner;           // uint32_t: the operation that claimed the entry (its key is the group's), or kNoEntry
    uint64_t g_start;         // uint32_t: first sorted position of the group
    uint64_t g_end;           // uint32_t: one past its last
    uint64_t g_meta;          // uint64_t: the key's valid item at batch start (meta word), or kEmpty
    uint64_t g_slot;          // uint64_t: pool offset of that slot (or of the slot an insert claimed)
    uint64_t g_bucket;        // uint64_t: global bucket number of g_slot (cache_params.cuh)
    uint64_t g_fp;            // uint32_t: the key's fingerprint
    uint64_t g_hash;          // uint64_t[kMaxHashes]: the key's hashes, written by the operation that claimed the entry
    uint64_t g_action;        // uint32_t: NetAction
    uint64_t g_src;           // uint32_t: the operation whose value the key holds at the end
    uint64_t g_block;         // uint64_t: the block the net value is written to
    uint64_t g_read;          // uint32_t: index of the group's pool value in `gather` (kNoEntry: none)
    uint64_t g_need;          // uint32_t: 1 when a member's output is the pool value
    uint64_t g_len;           // uint32_t: the length of the group's pool value read (pipe_gather)
    // lists built by the stages (lengths in counters)
    uint64_t groups;          // uint32_t[capacity]: group entries
    uint64_t inserts;         // uint32_t[capacity]: groups whose net effect is an insert
    uint64_t vwrites;         // uint32_t[capacity]: groups writing a value (updates, placed inserts)
    uint64_t deletes;         // uint32_t[capacity]: groups whose net effect is a delete
    uint64_t unsorted_off;    // uint64_t[capacity]: pool offsets of a list before address binning
    uint64_t unsorted_ent;    // uint32_t[capacity]: their groups
    uint64_t reads;           // uint32_t[capacity]: groups whose pool value is read, in address order
    uint64_t slot_writes;     // uint32_t[capacity]: groups writing their slot, in address order
    uint64_t bins;            // uint32_t[kAddressBins]: entries per address bin
    uint64_t bin_start;       // uint32_t[kAddressBins]: exclusive scan of bins
    uint64_t bin_fill;        // uint32_t[kAddressBins]: entries placed per bin
    uint64_t gather;          // capacity * value_size bytes: pool values of groups of several members
    uint64_t blocks;          // uint64_t[capacity]: blocks taken from the heap (format 2: ascending; format 3: by class)
    uint64_t vclass;          // uint32_t[capacity]: a value write's class and rank in it (heap_segments.cuh), where lengths vary
    uint64_t counters;        // unsigned long long[kPipeCounterCount]
    uint64_t address_shift;   // address bin of a pool offset: offset >> address_shift (< kAddressBins)
    // the lines phase M writes (pipe_write.cuh), a hash table of table_capacity entries
    uint64_t lines;           // unsigned long long: a 64-byte pool line's offset | mask of its slots written (4 bits), or 0
    uint64_t line_groups;     // uint32_t[4] per entry: the group writing each slot of the line (where its mask bit is set)
};

// Counters of one batch (and the list lengths stages read).
enum PipeCounter : int {
    kPipeGroups = 0,
    kPipeInserts = 1,
    kPipeValueWrites = 2,
    kPipeDeletes = 3,
    kPipeDistinct = 4,      // distinct keys (entries claimed in the key table)
    kPipeReads = 5,
    kPipeSlotWrites = 6,
    kPipeItemsAdded = 7,
    kPipeItemsRemoved = 8,
    kPipeNeedResize = 9,    // operations of groups that found every candidate bucket full
    kPipeBlocksTaken = 10,
    kPipeBlocksFreed = 11,
    kPipeCacheHits = 12,    // pool values served from BktCache
    kPipeCacheMisses = 13,  // pool values read across PCIe
    kPipeHeapShort = 14,    // value writes that found no free block (the host sizes the heap first: 0)
    kPipeFreeErrors = 15,   // unlinked blocks that were not in use (a bug: the host refuses to go on)
    kPipeSortN = 16,        // operations the sort sees: all, or none when the batch runs ungrouped
    kPipeUngrouped = 17,    // 1: a batch of reads whose keys do not repeat, run without grouping
    kPipeRepeats = 18,      // 1: the sample says the batch's keys repeat (grouping pays)
    kPipeHeapDisagree = 19, // blocks a segment's count promised and its bits did not have (a bug: the host refuses to go on)
    kPipeCounterCount = 20
};

constexpr uint32_t kNoEntry = 0xFFFFFFFFu;
constexpr int kAddressBins = 1 << 16;

__device__ __forceinline__ const PipeBatch& pipe_batch(const PipeParams& p) {
    return *reinterpret_cast<const PipeBatch*>(p.batch);
}

__device__ __forceinline__ unsigned long long* pipe_counters(const PipeParams& p) {
    return reinterpret_cast<unsigned long long*>(p.counters);
}

__device__ __forceinline__ uint64_t pipe_count(const PipeParams& p, PipeCounter c) {
    return *reinterpret_cast<const volatile unsigned long long*>(pipe_counters(p) + c);
}

template <typename T>
__device__ __forceinline__ T* arr(uint64_t address) {
    return reinterpret_cast<T*>(address);
}

// The operation at batch position i (the rerun list, when there is one).
__device__ __forceinline__ uint32_t op_at(const PipeBatch& b, uint64_t i) {
    return b.ops != 0 ? arr<const uint32_t>(b.ops)[i] : static_cast<uint32_t>(i);
}

// Where operation op's value read goes in the batch's `out`, in values.
__device__ __forceinline__ uint64_t out_index(const PipeBatch& b, uint32_t op) {
    return b.out_at != 0 ? arr<const uint32_t>(b.out_at)[op] : op;
}

__device__ __forceinline__ uint64_t global_thread() {
    return blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
}

__device__ __forceinline__ uint64_t global_threads() {
    return static_cast<uint64_t>(gridDim.x) * blockDim.x;
}

__device__ __forceinline__ uint64_t global_warp() { return global_thread() / kWarpSize; }

__device__ __forceinline__ uint64_t global_warps() { return global_threads() / kWarpSize; }

}  // namespace gphash
