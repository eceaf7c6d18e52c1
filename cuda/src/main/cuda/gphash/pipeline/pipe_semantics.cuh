// Stage 3: what every operation returns, and each group's net effect, computed in parallel.
//
// A group's operations take effect in batch order (the sort is stable). Each operation is a
// function of the key's state before it, (present, value source), where the source is the pool's
// value at batch start or some member's input value. Two scans answer "what was the state before
// position i" for every position at once:
//   1. presence: PUT and INSERT leave the key present, DELETE absent, the rest leave it as it was;
//      so the presence before i is set by the last such member before i (an inclusive max-scan of
//      positions, last_set), or is the batch-start presence when there is none in the group;
//   2. value source: PUT always, INSERT when absent, UPDATE and READ_MODIFY_WRITE when present make
//      their own input the value, and DELETE clears it; which of them act depends on scan 1, so a
//      second max-scan (last_src) follows it.
// Scans run over the whole sorted batch; a result before the group's first position belongs to
// another group and reads as "none". The group's net effect is the state after its last member.
#pragma once
#include <cstdint>
#include "../table/same_key_rules.cuh"
#include "../core/slot_meta.cuh"
#include "../core/table_params.cuh"
#include "pipe_params.cuh"

namespace gphash {

struct GroupView {
    uint32_t start;
    uint32_t end;
    bool present0;  // the key was in the table at batch start
};

__device__ __forceinline__ GroupView group_view(const PipeParams& p, uint32_t e) {
    return GroupView{arr<const uint32_t>(p.g_start)[e], arr<const uint32_t>(p.g_end)[e],
                     meta_is_item(arr<const uint64_t>(p.g_meta)[e])};
}

// The sorted batch and its scans, as the rules (same_key_rules.cuh) read them.
__device__ __forceinline__ SortedOps sorted_ops(const PipeParams& p) {
    return SortedOps{arr<const uint8_t>(pipe_batch(p).kinds), arr<const uint32_t>(p.sorted_op),
                     arr<const int32_t>(p.last_set), arr<const int32_t>(p.last_src)};
}

// One thread per sorted position: the input of scan 2 (needs scan 1 and the resolve stage).
__device__ void pipe_source_input(const PipeParams& p) {
    const PipeBatch& b = pipe_batch(p);
    for (uint64_t i = global_thread(); i < p.capacity; i += global_threads()) {
        int32_t v = -1;
        if (i < b.n) {
            const GroupView g = group_view(p, arr<const uint32_t>(p.sorted_entry)[i]);
            const SortedOps s = sorted_ops(p);
            const bool present = presence_through(s, g.start, g.present0, static_cast<int64_t>(i) - 1);
            v = sets_source(kind_at(s, static_cast<int32_t>(i)), present) ? static_cast<int32_t>(i) : -1;
        }
        arr<int32_t>(p.last_src)[i] = v;
    }
}

// One thread per group: the net effect, and the lists of the stages that act on it.
__device__ void pipe_net(const PipeParams& p) {
    const uint64_t groups = pipe_count(p, kPipeGroups);
    const int lane = lane_id();
    for (uint64_t i0 = global_thread() - lane; i0 < groups; i0 += global_threads()) {
        const uint64_t i = i0 + lane;
        uint32_t action = kActNone;
        uint32_t e = 0;
        if (i < groups) {
            e = arr<const uint32_t>(p.groups)[i];
            const GroupView g = group_view(p, e);
            const SortedOps s = sorted_ops(p);
            const int64_t last = static_cast<int64_t>(g.end) - 1;
            const bool present = presence_through(s, g.start, g.present0, last);
            const uint32_t src = source_through(s, g.start, g.present0, last);
            action = net_action(g.present0, present, src);
            if (action == kActUpdate || action == kActInsert) {
                arr<uint32_t>(p.g_src)[e] = src;
            }
            arr<uint32_t>(p.g_action)[e] = action;
        }
        const uint32_t ins = warp_append(pipe_counters(p) + kPipeInserts, action == kActInsert);
        if (action == kActInsert) arr<uint32_t>(p.inserts)[ins] = e;
        const uint32_t upd = warp_append(pipe_counters(p) + kPipeValueWrites, action == kActUpdate);
        if (action == kActUpdate) arr<uint32_t>(p.vwrites)[upd] = e;
        const uint32_t del = warp_append(pipe_counters(p) + kPipeDeletes, action == kActDelete);
        if (action == kActDelete) arr<uint32_t>(p.deletes)[del] = e;
    }
}

// One thread per sorted position (after placement): the outcome code, and where the output value
// comes from (vsrc). Groups that failed to place their insert rerun whole after a resize.
__device__ void pipe_outcome(const PipeParams& p) {
    const PipeBatch& b = pipe_batch(p);
    auto* codes = arr<uint8_t>(b.codes);
    for (uint64_t i = global_thread(); i < b.n; i += global_threads()) {
        const uint32_t e = arr<const uint32_t>(p.sorted_entry)[i];
        const uint32_t op = arr<const uint32_t>(p.sorted_op)[i];
        const GroupView g = group_view(p, e);
        uint32_t vsrc = kVsrcNone;
        uint8_t code;
        if (arr<const uint32_t>(p.g_action)[e] == kActFailed) {
            code = kNeedResize;
        } else {
            const SortedOps s = sorted_ops(p);
            const bool present = presence_through(s, g.start, g.present0, static_cast<int64_t>(i) - 1);
            const int kind = arr<const uint8_t>(b.kinds)[op];
            code = outcome_of(kind, present);
            vsrc = returns_value(kind, present) ? source_through(s, g.start, g.present0, static_cast<int64_t>(i) - 1)
                                                : kVsrcNone;
            if (vsrc == kVsrcPool) {
                arr<uint32_t>(p.g_need)[e] = 1;
            }
        }
        codes[op] = code;
        arr<uint32_t>(p.vsrc)[i] = vsrc;
    }
}

}  // namespace gphash
