// The rules a batch's operations on one key follow (docs/USAGE.md, "Batches"): they take effect in
// batch order, each answers from the key's state before it, a state of (present, value source), where
// the source is the pool's value at batch start or some member's input value.
//
// Written once for the kernels: the pipeline's semantics stage (pipeline/pipe_semantics.cuh) reads
// the state before every position from two max-scans, the group kernel (batch_groups.cuh) walks a
// group's members one by one, and both take the rules from here. __host__ __device__ and free of
// pool reads, so that a host program of the tests (cuda/src/test/cuda/same_key_check.cu) built by
// nvcc runs the semantics stage's algorithm on the CPU, and SameKeyRulesAgreementTest holds it to
// the Java model (GroupSemanticsModel) and to plain serial execution in CI, without a GPU.
#pragma once
#include <cstdint>
#include "../core/table_params.cuh"

namespace gphash {

// A group's net effect on the table.
enum NetAction : uint32_t {
    kActNone = 0,
    kActUpdate = 1,   // the valid item points at a new block
    kActInsert = 2,   // a new item in a claimed slot
    kActDelete = 3,   // the valid item goes
    kActFailed = 4    // an insert with every candidate bucket full: the group reruns after a resize
};

// Value sources besides an operation's index.
constexpr uint32_t kVsrcNone = 0xFFFFFFFFu;   // no value (absent, or deleted)
constexpr uint32_t kVsrcPool = 0xFFFFFFFEu;   // the group's value at batch start, from the pool

// Whether operations of this kind set the key's presence (PUT and INSERT: present after; DELETE: absent).
__host__ __device__ __forceinline__ bool sets_presence(int kind) { return kind == kPut || kind == kInsert || kind == kDelete; }

// The presence an operation that sets it leaves behind.
__host__ __device__ __forceinline__ bool presence_set_by(int kind) { return kind != kDelete; }

// Whether an operation makes its own input the key's value (or, DELETE, clears the value), given the
// key's presence before it: PUT always, INSERT when absent, UPDATE and READ_MODIFY_WRITE when present.
__host__ __device__ __forceinline__ bool sets_source(int kind, bool present) {
    switch (kind) {
        case kPut:
        case kDelete: return true;
        case kInsert: return !present;
        case kUpdate:
        case kReadModifyWrite: return present;
        default: return false;
    }
}

// What an operation answers, given the key's presence before it.
__host__ __device__ __forceinline__ uint8_t outcome_of(int kind, bool present) {
    switch (kind) {
        case kGet: return present ? kFound : kNotFound;
        case kPut: return present ? kUpdated : kInserted;
        case kInsert: return present ? kExists : kInserted;
        case kUpdate: return present ? kUpdated : kNotFound;
        case kDelete: return present ? kDeleted : kNotFound;
        case kReadModifyWrite: return present ? kReplaced : kNotFound;
        default: return kRetry;  // the host validates kinds; conditional kinds never reach a kernel
    }
}

// Whether an operation hands back the key's value before it (GET finds it, READ_MODIFY_WRITE replaces it).
__host__ __device__ __forceinline__ bool returns_value(int kind, bool present) {
    return present && (kind == kGet || kind == kReadModifyWrite);
}

// A group's net effect from its state at batch start and after its last member (src: a value source).
__host__ __device__ __forceinline__ uint32_t net_action(bool present0, bool present, uint32_t src) {
    if (present0 && !present) {
        return kActDelete;
    }
    if (present && src != kVsrcPool && src != kVsrcNone) {
        return present0 ? kActUpdate : kActInsert;
    }
    return kActNone;
}

// A batch sorted by key (each group a run of positions, batch order within it) with the two scans'
// results: what the semantics stage reads the state before any position from.
struct SortedOps {
    const uint8_t* kinds;     // by operation: OpKind ordinals
    const uint32_t* op;       // by position: the operation there
    const int32_t* last_set;  // by position: the last position at or before it that sets presence, or -1
    const int32_t* last_src;  // by position: the last position at or before it that sets the source, or -1
};

__host__ __device__ __forceinline__ int kind_at(const SortedOps& s, int32_t pos) { return s.kinds[s.op[pos]]; }

// Presence after position `last` (inclusive) of the group starting at `start` (last < start: before
// the group, so the batch start's). A max-scan result before `start` belongs to another group.
__host__ __device__ __forceinline__ bool presence_through(const SortedOps& s, uint32_t start, bool present0, int64_t last) {
    const int32_t q = last >= static_cast<int64_t>(start) ? s.last_set[last] : -1;
    return q >= static_cast<int32_t>(start) ? presence_set_by(kind_at(s, q)) : present0;
}

// Value source after position `last`: an operation index, kVsrcPool or kVsrcNone.
__host__ __device__ __forceinline__ uint32_t source_through(const SortedOps& s, uint32_t start, bool present0, int64_t last) {
    const int32_t q = last >= static_cast<int64_t>(start) ? s.last_src[last] : -1;
    if (q >= static_cast<int32_t>(start)) {
        return kind_at(s, q) == kDelete ? kVsrcNone : s.op[q];
    }
    return present0 ? kVsrcPool : kVsrcNone;
}

}  // namespace gphash
