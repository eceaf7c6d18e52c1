// Kernel-side view of one pool: where the table lives and its geometry.
// Mirrors org.gphash.cuda.runtime.KernelParams byte for byte (every field 8 bytes, little-endian), and the
// pool format of docs/DESIGN.md: every position is an offset from the start of the pool file.
#pragma once
#include <cstdint>
#include "warp.cuh"

namespace gphash {
constexpr int kMaxLevels = 12;  // the geometry's levels plus the extra ones a resize may add
constexpr int kMaxHashes = 4;

struct TableParams {
    uint64_t pool;                         // device address of the mapped pool (== its host address)
    uint64_t level_offset[kMaxLevels];     // top level first
    int64_t top_log2;                      // the top level has 2^top_log2 buckets
    int64_t level_count;                   // levels in level_offset
    int64_t hashes;
    int64_t slots;                         // slots per bucket
    int64_t key_size;
    int64_t key_stride;                    // key_size rounded up to 8
    int64_t slot_size;                     // 8-byte meta word + key_stride
    int64_t bucket_size;
    int64_t value_size;
    uint64_t seed[kMaxHashes];
    uint64_t tags;                         // the HBM mirror's tag array (pipeline/mirror_tags.cuh); 0 for the pool
    int64_t format;                        // the pool's format: 2 or 3 (core/slot_meta_format.cuh)
    int64_t value_class;                   // format 3: the class of a value of value_size bytes; -1 in format 2
};

// One batch of operations in device memory (column-wise, as org.gphash.Batch holds them).
struct BatchParams {
    uint64_t n;
    uint64_t kinds;          // uint8_t[n], OpKind ordinals
    uint64_t keys;           // n * key_size bytes
    uint64_t values;         // n * value_size bytes (input values)
    uint64_t blocks;         // uint64_t[n]: a free value block reserved by the host for each write
    uint64_t codes;          // uint8_t[n]: outcome code | kConsumedFlag
    uint64_t out;            // n * value_size bytes: values found (GET) or replaced (RMW)
    uint64_t retired;        // uint64_t[retired_capacity]: value blocks unlinked by this batch
    uint64_t retired_capacity;
    uint64_t counters;       // uint64_t[kCounterCount]
    uint64_t retry_only;     // 1: run only the operations whose code is kNeedResize (after a resize)
    // Operations grouped by key (batch_groups.cuh): an open-addressing table of group_capacity
    // entries (a power of two) and, per operation, its group and the next member of its group.
    uint64_t group_owner;    // uint64_t[group_capacity]: first operation to claim the entry, or kNoOp
    uint64_t group_top;      // uint64_t[group_capacity]: last member pushed, or kNoOp
    uint64_t group_count;    // uint32_t[group_capacity]: members
    uint64_t group_capacity;
    uint64_t op_group;       // uint64_t[n]: entry of the operation's group (kNoOp: not in this run)
    uint64_t op_next;        // uint64_t[n]: next member of the same group, or kNoOp
};

constexpr uint64_t kNoOp = ~0ull;

// Slots of the counters array shared by every kernel.
enum Counter : int {
    kRetiredCount = 0,   // entries written to `retired` (may exceed its capacity: overflow)
    kItemsAdded = 1,
    kItemsRemoved = 2,
    kNeedResizeCount = 3,  // operations that found every candidate bucket full
    kCounterCount = 8
};

// Operation kinds: org.gphash.OpKind ordinals.
// The two conditional kinds never reach a kernel: the host runs them as plain kinds under the
// engine's lock (ConditionalBatches.java); a kernel that met one would answer kRetry.
enum OpKind : int {
    kGet = 0, kPut = 1, kInsert = 2, kUpdate = 3, kDelete = 4, kReadModifyWrite = 5,
    kCompareAndSet = 6, kCompareAndDelete = 7
};

// Kinds that write a value from the batch's values column.
__host__ __device__ __forceinline__ bool writes_value(int kind) {
    return kind == kPut || kind == kInsert || kind == kUpdate || kind == kReadModifyWrite;
}

// Kinds that read a value into the batch's out column.
__host__ __device__ __forceinline__ bool reads_value(int kind) { return kind == kGet || kind == kReadModifyWrite; }

// Outcome codes: org.gphash.Outcome (and org.gphash.table.OpStatus).
enum Outcome : uint8_t {
    kRetry = 0, kFound = 1, kNotFound = 2, kInserted = 3, kUpdated = 4, kExists = 5, kDeleted = 6,
    kReplaced = 7,
    kNeedResize = 15      // not applied: the host resizes and runs the operation again
};
// Set on an outcome when the operation published the value block the host reserved for it; the host
// frees unpublished blocks itself and published ones only through the retired list.
constexpr uint8_t kConsumedFlag = 0x80;

}  // namespace gphash
