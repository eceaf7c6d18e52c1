// Stage 5: the net writes, in the slot protocol's persist order (slot_protocol.cuh), phase by phase,
// each phase a kernel whose threads fence their pool stores (so a phase is durable before the next
// begins) and each issuing its stores in address order:
//   V  every new value into a block taken from the heap, lowest addresses first (ascending);
//   K  every inserted key into its claimed slot, with the INSERT state (slots in address order), by
//      whole 64-byte lines from the mirror where slots are 16 bytes (pipe_write_keys);
//   M  every slot's new meta word: published item, new value offset, or EMPTY (address order);
// then the mirror, BktCache and the heap follow (GPU memory only). A crash leaves each slot EMPTY,
// INSERT (cleared by recovery) or a whole item, exactly as the CPU engine's protocol does.
#pragma once
#include <cstdint>
#include "../cache_mirror.cuh"
#include "../slot_protocol.cuh"
#include "address_bins.cuh"
#include "heap_bitmap.cuh"
#include "index_mirror.cuh"
#include "mirror_tags.cuh"
#include "pipe_params.cuh"
#include "value_lanes.cuh"

namespace gphash {

// Blocks for every value write, the lowest free ones (heap_free_counts and a scan came first).
__device__ void pipe_take(const PipeParams& p, const HeapParams& h) {
    heap_take(h, pipe_count(p, kPipeValueWrites), arr<uint64_t>(p.blocks), pipe_counters(p) + kPipeBlocksTaken,
              pipe_counters(p) + kPipeHeapShort);
}

// Phase V: writing group r gets block r and its value; every writing or deleting group joins the
// slot-write list, binned by slot address.
__device__ void pipe_write_values(const TableParams& t, const PipeParams& p) {
    const PipeBatch& b = pipe_batch(p);
    const uint64_t writes = pipe_count(p, kPipeValueWrites);
    const uint64_t total = writes + pipe_count(p, kPipeDeletes);
    const uint64_t taken = pipe_count(p, kPipeBlocksTaken);
    const uint64_t vs = static_cast<uint64_t>(t.value_size);
    const ValueLanes v = value_lanes(vs);
    uint8_t* pool = reinterpret_cast<uint8_t*>(t.pool);
    for (uint64_t r0 = global_warp() * v.per_warp; r0 < total; r0 += global_warps() * v.per_warp) {
        const uint64_t r = r0 + v.sub;
        uint32_t e = 0;
        const uint8_t* from = nullptr;
        uint8_t* to = nullptr;
        bool slot_write = false;
        if (r < total && v.index == 0) {
            if (r < writes) {
                e = arr<const uint32_t>(p.vwrites)[r];
                if (r < taken) {  // always, unless the host let the heap run short (counted: a bug)
                    const uint64_t block = arr<const uint64_t>(p.blocks)[r];
                    arr<uint64_t>(p.g_block)[e] = block;
                    from = arr<const uint8_t>(b.values) + static_cast<uint64_t>(arr<const uint32_t>(p.g_src)[e]) * vs;
                    to = pool + block;
                    slot_write = true;
                }
            } else {
                e = arr<const uint32_t>(p.deletes)[r - writes];
                slot_write = true;
            }
        }
        from = shfl_pointer(from, v.leader);
        to = shfl_pointer(to, v.leader);
        if (from != nullptr) {
            sub_copy(v, to, from, vs);
            persist_fence();
        }
        // One append per value: the sub-group leaders take part, the other lanes pass false.
        bin_append(p, kPipeSlotWrites, slot_write, slot_write ? arr<const uint64_t>(p.g_slot)[e] : 0, e);
    }
}

constexpr uint64_t kPoolLine = 64;

// Whether phase K writes into global bucket x by whole lines (pipe_write_keys): slots of 16 bytes,
// so a line holds whole slots, and the bucket 64-byte aligned in the pool and in the mirror, so a
// slot's line is inside its bucket in both.
__device__ __forceinline__ bool keys_by_line(const TableParams& t, const TableParams& mt, uint64_t x) {
    if (t.slot_size != 16 || t.bucket_size % kPoolLine != 0) {
        return false;
    }
    return ((pool_slot_of(t, x, 0) | reinterpret_cast<uintptr_t>(mirror_slot_of(mt, x, 0))) & (kPoolLine - 1)) == 0;
}

// Lane `quarter` (0 to 3) of four: its 16 bytes of slot `slot`'s 64-byte line, from the mirror into
// the pool (global bucket x, keys_by_line), then the fence. Four lanes side by side make one
// write of the whole line.
__device__ __forceinline__ void copy_line_to_pool(const TableParams& t, const TableParams& mt, uint8_t* pool,
                                                  uint64_t x, uint64_t slot, uint64_t quarter) {
    const uint64_t line = (slot - pool_slot_of(t, x, 0)) & ~(kPoolLine - 1);  // within the bucket
    const auto* from = reinterpret_cast<const unsigned long long*>(mirror_slot_of(mt, x, 0) + line) + 2 * quarter;
    uint8_t* to = pool + pool_slot_of(t, x, 0) + line + 16 * quarter;
    const unsigned long long a = __ldcg(from);
    const unsigned long long b = __ldcg(from + 1);
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(to), "l"(a), "l"(b) : "memory");
    persist_fence();
}

// Phase K: each inserted key, with the INSERT state, into its slot, four lanes a slot write. Where
// keys_by_line, the slot's whole line from the mirror, since the link's cost is per write and a whole
// line is the cheapest write (docs/FACTS.md): the mirror has held the claim (INSERT) and the key since
// the place stage, and the line's other slots as the pool has them (this batch's new meta words reach
// the mirror only in phase M, after the pool). Two inserts into one line both copy it, the same bytes.
// Nothing a reader of the mirror could find changes. Otherwise one store of the pair.
__device__ void pipe_write_keys(const TableParams& t, const TableParams& mt, const PipeParams& p) {
    const uint64_t n = pipe_count(p, kPipeSlotWrites);
    const PipeBatch& b = pipe_batch(p);
    uint8_t* pool = reinterpret_cast<uint8_t*>(t.pool);
    const uint64_t quarter = threadIdx.x & 3;
    for (uint64_t i = global_thread() >> 2; i < n; i += global_threads() >> 2) {
        const uint32_t e = arr<const uint32_t>(p.slot_writes)[i];
        if (arr<const uint32_t>(p.g_action)[e] != kActInsert) {
            continue;
        }
        const uint64_t x = arr<const uint64_t>(p.g_bucket)[e];
        const uint64_t slot = arr<const uint64_t>(p.g_slot)[e];
        if (keys_by_line(t, mt, x)) {
            copy_line_to_pool(t, mt, pool, x, slot, quarter);
        } else if (quarter == 0) {
            const uint32_t op = arr<const uint32_t>(p.owner)[e];  // the operation whose key names the group
            store_claim_and_key(t, pool, slot, arr<const uint8_t>(b.keys) + static_cast<uint64_t>(op) * t.key_size);
        }
    }
}

// The meta word a writing group leaves in its slot.
__device__ __forceinline__ uint64_t net_meta(const PipeParams& p, uint32_t e, uint32_t action) {
    switch (action) {
        case kActUpdate:
            return meta_make(meta_fingerprint(arr<const uint64_t>(p.g_meta)[e]), arr<const uint64_t>(p.g_block)[e]);
        case kActInsert: return meta_make(arr<const uint32_t>(p.g_fp)[e], arr<const uint64_t>(p.g_block)[e]);
        default: return kEmpty;
    }
}

// Phase M: each slot's new meta word into the pool, then into the mirror (and its tag). Word by word,
// not by lines as phase K: a line holding this batch's other new words would have to come from the
// mirror, and a reader of the mirror (small reads run beside a batch) must never see a word before
// the pool has it.
__device__ void pipe_publish(const TableParams& t, const TableParams& mt, const PipeParams& p) {
    const uint64_t n = pipe_count(p, kPipeSlotWrites);
    uint8_t* pool = reinterpret_cast<uint8_t*>(t.pool);
    const int lane = static_cast<int>(threadIdx.x) & (kWarpSize - 1);
    for (uint64_t i0 = global_thread() - lane; i0 < n; i0 += global_threads()) {
        const uint64_t i = i0 + lane;
        bool added = false;
        bool removed = false;
        if (i < n) {
            const uint32_t e = arr<const uint32_t>(p.slot_writes)[i];
            const uint32_t action = arr<const uint32_t>(p.g_action)[e];
            const uint64_t meta = net_meta(p, e, action);
            const uint64_t slot = arr<const uint64_t>(p.g_slot)[e];
            const uint64_t x = arr<const uint64_t>(p.g_bucket)[e];
            publish_slot(pool, slot, meta);
            mirror_store_meta(mt, x, slot_index_of(t, x, slot), meta);
            added = action == kActInsert;
            removed = action == kActDelete;
        }
        const uint32_t a = __popc(__ballot_sync(kFullMask, added));
        const uint32_t r = __popc(__ballot_sync(kFullMask, removed));
        if (lane == 0) {
            if (a != 0) atomicAdd(pipe_counters(p) + kPipeItemsAdded, static_cast<unsigned long long>(a));
            if (r != 0) atomicAdd(pipe_counters(p) + kPipeItemsRemoved, static_cast<unsigned long long>(r));
        }
    }
}

// One warp per slot write: BktCache's copy of the slot follows the pool (cache_mirror.cuh), from the
// mirror's key and the written value in GPU memory.
__device__ void pipe_cache_mirror(const TableParams& t, const TableParams& mt, const PipeParams& p,
                                  const CacheParams& c) {
    const uint64_t n = pipe_count(p, kPipeSlotWrites);
    const PipeBatch& b = pipe_batch(p);
    for (uint64_t i = global_warp(); i < n; i += global_warps()) {
        const uint32_t e = arr<const uint32_t>(p.slot_writes)[i];
        const uint32_t action = arr<const uint32_t>(p.g_action)[e];
        const uint64_t x = arr<const uint64_t>(p.g_bucket)[e];
        const uint64_t slot = arr<const uint64_t>(p.g_slot)[e];
        const int s = slot_index_of(t, x, slot);
        const uint8_t* value = action == kActDelete
                ? nullptr
                : arr<const uint8_t>(b.values) + static_cast<uint64_t>(arr<const uint32_t>(p.g_src)[e]) * t.value_size;
        mirror_slot_known(t, &c, x, s, net_meta(p, e, action), mirror_slot_of(mt, x, s) + 8, value);
    }
}

// One thread per slot write: the block an update or delete unlinked goes back to the heap. Every
// read of it in this batch is done; a later batch may take it.
__device__ void pipe_retire(const PipeParams& p, const HeapParams& h) {
    const uint64_t n = pipe_count(p, kPipeSlotWrites);
    const int lane = static_cast<int>(threadIdx.x) & (kWarpSize - 1);
    for (uint64_t i0 = global_thread() - lane; i0 < n; i0 += global_threads()) {
        const uint64_t i = i0 + lane;
        bool freed = false;
        bool bad = false;
        if (i < n) {
            const uint32_t e = arr<const uint32_t>(p.slot_writes)[i];
            const uint32_t action = arr<const uint32_t>(p.g_action)[e];
            if (action == kActUpdate || action == kActDelete) {
                freed = heap_free(h, meta_value_offset(arr<const uint64_t>(p.g_meta)[e]));
                bad = !freed;
            }
        }
        const uint32_t f = __popc(__ballot_sync(kFullMask, freed));
        const uint32_t x = __popc(__ballot_sync(kFullMask, bad));
        if (lane == 0) {
            if (f != 0) atomicAdd(pipe_counters(p) + kPipeBlocksFreed, static_cast<unsigned long long>(f));
            if (x != 0) atomicAdd(pipe_counters(p) + kPipeFreeErrors, static_cast<unsigned long long>(x));
        }
    }
}

}  // namespace gphash
