// Stage 5: the net writes, in the slot protocol's persist order (slot_protocol.cuh), phase by phase,
// each phase a kernel whose threads fence their pool stores (so a phase is durable before the next
// begins) and each issuing its stores in address order:
//   V  every new value into a block taken from the heap, lowest addresses first (ascending);
//   K  every inserted key into its claimed slot, with the INSERT state (slots in address order), by
//      whole 64-byte lines from the mirror where slots are 16 bytes (pipe_write_keys); format 3 skips
//      it where M writes whole lines, whose slots carry the key beside the word (one write, not two);
//   M  every slot's new meta word: published item, new value offset, or EMPTY (address order), by whole
//      64-byte lines where slots are 16 bytes, each line once (pipe_line_table, pipe_publish_pool);
// then the mirror, BktCache and the heap follow (GPU memory only). A crash leaves each slot EMPTY,
// INSERT (cleared by recovery) or a whole item, exactly as the CPU engine's protocol does.
#pragma once
#include <cstdint>
#include "../cache/cache_mirror.cuh"
#include "../table/slot_protocol.cuh"
#include "address_bins.cuh"
#include "heap_bitmap.cuh"
#include "heap_segments.cuh"
#include "index_mirror.cuh"
#include "mirror_tags.cuh"
#include "pipe_params.cuh"
#include "value_lanes.cuh"

namespace gphash {

// Blocks for every value write, the lowest free ones (heap_free_counts and a scan came first): format
// 2's heap; format 3's takes in its steps (heap_segments.cuh, pipe_value_classes).
__device__ void pipe_take(const PipeParams& p, const HeapParams& h) {
    heap_take(h, pipe_count(p, kPipeValueWrites), arr<uint64_t>(p.blocks), pipe_counters(p) + kPipeBlocksTaken,
              pipe_counters(p) + kPipeHeapShort);
}

// The length of operation op's input value (the batch's lengths column, or the value size).
__device__ __forceinline__ uint32_t input_length(const TableParams& t, const PipeBatch& b, uint32_t op) {
    return b.lengths != 0 ? arr<const uint32_t>(b.lengths)[op] : static_cast<uint32_t>(t.value_size);
}

// Format 3's want step where the batch's values have lengths of their own: each value write's class and
// its rank among the writes of that class (heap_segments.cuh), a thread per write. Nothing where every
// value has the value size.
__device__ void pipe_value_classes(const TableParams& t, const PipeParams& p, const HeapParams& h) {
    const PipeBatch& b = pipe_batch(p);
    if (h.segmented == 0 || b.lengths == 0) {
        return;
    }
    const uint64_t writes = pipe_count(p, kPipeValueWrites);
    const int lane = lane_id();
    for (uint64_t r0 = global_thread() - lane; r0 < writes; r0 += global_threads()) {
        const uint64_t r = r0 + lane;
        int c = -1;
        if (r < writes) {
            const uint32_t e = arr<const uint32_t>(p.vwrites)[r];
            c = value_class_for(t, input_length(t, b, arr<const uint32_t>(p.g_src)[e]));
        }
        const uint32_t rank = seg_want(h, c);
        if (r < writes) {
            arr<uint32_t>(p.vclass)[r] = (static_cast<uint32_t>(c) << kSegRankBits) | rank;
        }
    }
}

// Where format 3 keeps a written group's class beside its block until the publish: g_block's top
// byte (pool offsets are below 2^48).
constexpr int kBlockClassShift = 56;

// Phase V: writing group r gets block r and its value; then every writing or deleting group joins the
// slot-write list, binned by slot address. The list's places are known without counting (the written
// groups with a block, then the deletes), so no lane appends to one shared counter: with a sub-group of
// 16 lanes per 128-byte value, that append was an atomic on one word for every two entries, 2^19 of
// them in a row for 2^20 deletes (most of a delete's phase V, which writes no value).
__device__ void pipe_write_values(const TableParams& t, const PipeParams& p, const HeapParams& h) {
    const PipeBatch& b = pipe_batch(p);
    const uint64_t writes = pipe_count(p, kPipeValueWrites);
    // Blocks taken: all the writes, unless the host let the heap run short (counted: a bug, the host
    // refuses to go on). Format 2 writes those with a block; format 3's blocks are by class, so a
    // short take writes none.
    const uint64_t got = pipe_count(p, kPipeBlocksTaken);
    const uint64_t taken = h.segmented != 0 ? (got >= writes ? writes : 0) : min(writes, got);
    const uint64_t vs = static_cast<uint64_t>(t.value_size);
    const bool classes = h.segmented != 0 && b.lengths != 0;
    const ValueLanes v = value_lanes_for(vs, classes);
    uint8_t* pool = reinterpret_cast<uint8_t*>(t.pool);
    for (uint64_t r0 = global_warp() * v.per_warp; r0 < taken; r0 += global_warps() * v.per_warp) {
        const uint64_t r = r0 + v.sub;
        const uint8_t* from = nullptr;
        uint8_t* to = nullptr;
        uint64_t length = 0;
        uint64_t framed = 0;
        if (r < taken && v.index == 0) {
            const uint32_t e = arr<const uint32_t>(p.vwrites)[r];
            const uint32_t src = arr<const uint32_t>(p.g_src)[e];
            uint64_t block;
            if (h.segmented != 0) {
                const uint32_t cr = classes ? arr<const uint32_t>(p.vclass)[r] : 0;
                const int c = classes ? static_cast<int>(cr >> kSegRankBits) : static_cast<int>(h.take_class);
                block = arr<const uint64_t>(p.blocks)[seg_block_index(h, c, classes ? cr & kSegRankMask : r)];
                arr<uint64_t>(p.g_block)[e] = block | (static_cast<uint64_t>(c) << kBlockClassShift);
                framed = value_class_is_bare(c) ? 0 : 1;
            } else {
                block = arr<const uint64_t>(p.blocks)[r];
                arr<uint64_t>(p.g_block)[e] = block;
            }
            length = input_length(t, b, src);
            from = arr<const uint8_t>(b.values) + static_cast<uint64_t>(src) * vs;
            to = pool + block;
        }
        from = shfl_pointer(from, v.leader);
        to = shfl_pointer(to, v.leader);
        length = __shfl_sync(kFullMask, length, v.leader);
        framed = __shfl_sync(kFullMask, framed, v.leader);
        if (from != nullptr) {
            if (framed != 0) {
                sub_copy_after_word(v, to, value_header_make(static_cast<uint32_t>(length), 0), from, length);
            } else {
                sub_copy(v, to, from, length);
            }
            persist_fence();
        }
    }
    const uint64_t listed = taken + pipe_count(p, kPipeDeletes);
    if (global_thread() == 0) {
        pipe_counters(p)[kPipeSlotWrites] = listed;
    }
    for (uint64_t i = global_thread(); i < listed; i += global_threads()) {
        const uint32_t e = i < taken ? arr<const uint32_t>(p.vwrites)[i] : arr<const uint32_t>(p.deletes)[i - taken];
        bin_place(p, i, arr<const uint64_t>(p.g_slot)[e], e);
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
            if (publishes_key_with_word(t)) {
                // Format 3 publishes key and meta word together: phase M's line carries the mirror's key
                // beside the new word (one 16-byte store per slot), so the pool's slot goes EMPTY ->
                // item without an INSERT state, and a crash between leaves it EMPTY; a word published
                // over a key not yet whole fails its fingerprint and recovery clears it (issue 53).
                continue;
            }
            copy_line_to_pool(t, mt, pool, x, slot, quarter);
        } else if (quarter == 0) {
            const uint32_t op = arr<const uint32_t>(p.owner)[e];  // the operation whose key names the group
            store_claim_and_key(t, pool, slot, arr<const uint8_t>(b.keys) + static_cast<uint64_t>(op) * t.key_size);
        }
    }
}

// The word that publishes a written group's value: its block, and in format 3 the class beside it (pipe_write_values).
__device__ __forceinline__ uint64_t publish_written(const TableParams& t, uint32_t fp, uint64_t g_block) {
    if (t.format != kFormat3) {
        return meta_publish(t, fp, g_block);
    }
    return meta_publish_class(t, fp, static_cast<int>(g_block >> kBlockClassShift),
                              g_block & ((1ull << kBlockClassShift) - 1));
}

// The meta word a writing group leaves in its slot.
__device__ __forceinline__ uint64_t net_meta(const TableParams& t, const PipeParams& p, uint32_t e, uint32_t action) {
    switch (action) {
        case kActUpdate:
            return publish_written(t, meta_fingerprint(arr<const uint64_t>(p.g_meta)[e]), arr<const uint64_t>(p.g_block)[e]);
        case kActInsert: return publish_written(t, arr<const uint32_t>(p.g_fp)[e], arr<const uint64_t>(p.g_block)[e]);
        default: return kEmpty;
    }
}

// Phase M writes the pool first and the mirror after, since a reader of the mirror (small reads run
// beside a batch) must never see a word before the pool has it. Where keys_by_line, it writes whole
// 64-byte lines, the cheapest write the link takes (docs/FACTS.md): a line's four slots as the mirror
// still holds them (the pool's exact copy), with this batch's new meta words in place of the old.
// Two slot writes may share a line (about one in eight at 16M keys), and a line written once per
// slot write would lose all but one of their words; so the batch's lines are gathered first in a
// hash table (PipeParams.lines: the line's pool offset and a mask of its slots written, with each
// such slot's group beside it), and the line's first slot write writes it. Three steps, each done
// everywhere before the next: pipe_line_table, pipe_publish_pool, pipe_publish_mirror.

// A line's first entry in the lines table (then linear probing).
__device__ __forceinline__ uint64_t line_home(uint64_t line, uint64_t entries) {
    uint64_t h = (line >> 6) * 0x9E3779B97F4A7C15ull;
    return (h ^ (h >> 29)) & (entries - 1);
}

// The lines table's entry of `line`, which pipe_line_table put there.
__device__ __forceinline__ uint64_t line_entry(const PipeParams& p, uint64_t line) {
    const auto* keys = arr<const unsigned long long>(p.lines);
    uint64_t h = line_home(line, p.table_capacity);
    while ((keys[h] & ~(kPoolLine - 1)) != line) {
        h = (h + 1) & (p.table_capacity - 1);
    }
    return h;
}

// Step 1 (keys_by_line buckets), a thread per slot write: its line into the lines table (the first
// writer claims the entry, the others OR their slot's bit in), its group beside it. The table's keys
// are zero before (the run's memset; small writes clear their prefix). A slot has one writer.
__device__ void pipe_line_table(const TableParams& t, const TableParams& mt, const PipeParams& p) {
    const uint64_t n = pipe_count(p, kPipeSlotWrites);
    auto* keys = arr<unsigned long long>(p.lines);
    for (uint64_t i = global_thread(); i < n; i += global_threads()) {
        const uint32_t e = arr<const uint32_t>(p.slot_writes)[i];
        const uint64_t x = arr<const uint64_t>(p.g_bucket)[e];
        if (!keys_by_line(t, mt, x)) {
            continue;
        }
        const uint64_t slot = arr<const uint64_t>(p.g_slot)[e];
        const uint64_t line = slot & ~(kPoolLine - 1);  // the bucket is line-aligned in the pool
        const unsigned long long bit = 1ull << ((slot - line) >> 4);
        uint64_t h = line_home(line, p.table_capacity);
        for (;;) {
            const unsigned long long old = atomicCAS(keys + h, 0ull, line | bit);
            if (old == 0) {
                break;
            }
            if ((old & ~(kPoolLine - 1)) == line) {
                atomicOr(keys + h, bit);
                break;
            }
            h = (h + 1) & (p.table_capacity - 1);
        }
        arr<uint32_t>(p.line_groups)[4 * h + ((slot - line) >> 4)] = e;
    }
}

// Step 2, four lanes per slot write, in address order: the pool. A line's first slot write (lowest
// bit of its mask) writes the whole line, lane `quarter` its slot `quarter`: the mirror's key and
// meta word, or the new word where that slot is written. Other buckets: the slot's new word alone.
// Then the fence.
__device__ void pipe_publish_pool(const TableParams& t, const TableParams& mt, const PipeParams& p) {
    const uint64_t n = pipe_count(p, kPipeSlotWrites);
    uint8_t* pool = reinterpret_cast<uint8_t*>(t.pool);
    const uint32_t quarter = threadIdx.x & 3;
    for (uint64_t i = global_thread() >> 2; i < n; i += global_threads() >> 2) {
        const uint32_t e = arr<const uint32_t>(p.slot_writes)[i];
        const uint64_t x = arr<const uint64_t>(p.g_bucket)[e];
        const uint64_t slot = arr<const uint64_t>(p.g_slot)[e];
        if (!keys_by_line(t, mt, x)) {
            if (quarter == 0) {
                publish_slot(pool, slot, net_meta(t, p, e, arr<const uint32_t>(p.g_action)[e]));
            }
            continue;
        }
        const uint64_t line = slot & ~(kPoolLine - 1);
        const uint64_t h = line_entry(p, line);
        const uint32_t mask = static_cast<uint32_t>(arr<const unsigned long long>(p.lines)[h] & 15u);
        if (static_cast<uint64_t>(__ffs(mask) - 1) != ((slot - line) >> 4)) {
            continue;  // the line's first slot write writes it
        }
        const uint64_t base = pool_slot_of(t, x, 0);
        const auto* from = reinterpret_cast<const unsigned long long*>(mirror_slot_of(mt, x, 0) + (line - base)) + 2 * quarter;
        unsigned long long meta = __ldcg(from);
        const unsigned long long key = __ldcg(from + 1);
        if ((mask >> quarter) & 1u) {
            const uint32_t g = arr<const uint32_t>(p.line_groups)[4 * h + quarter];
            meta = net_meta(t, p, g, arr<const uint32_t>(p.g_action)[g]);
        }
        asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(pool + line + 16 * quarter), "l"(meta), "l"(key)
                     : "memory");
        persist_fence();
    }
}

// Step 3, after the pool everywhere: each slot's new meta word into the mirror (and its tag), and the
// item counts.
__device__ void pipe_publish_mirror(const TableParams& t, const TableParams& mt, const PipeParams& p) {
    const uint64_t n = pipe_count(p, kPipeSlotWrites);
    const int lane = lane_id();
    for (uint64_t i0 = global_thread() - lane; i0 < n; i0 += global_threads()) {
        const uint64_t i = i0 + lane;
        bool added = false;
        bool removed = false;
        if (i < n) {
            const uint32_t e = arr<const uint32_t>(p.slot_writes)[i];
            const uint32_t action = arr<const uint32_t>(p.g_action)[e];
            const uint64_t slot = arr<const uint64_t>(p.g_slot)[e];
            const uint64_t x = arr<const uint64_t>(p.g_bucket)[e];
            mirror_store_meta(mt, x, slot_index_of(t, x, slot), net_meta(t, p, e, action));
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
        mirror_slot_known(t, &c, x, s, net_meta(t, p, e, action), mirror_slot_of(mt, x, s) + 8, value);
    }
}

// One thread per slot write: the block an update or delete unlinked goes back to the heap (either
// form). Every read of it in this batch is done; a later batch may take it.
__device__ void pipe_retire(const TableParams& t, const PipeParams& p, const HeapParams& h) {
    const uint64_t n = pipe_count(p, kPipeSlotWrites);
    const int lane = lane_id();
    for (uint64_t i0 = global_thread() - lane; i0 < n; i0 += global_threads()) {
        const uint64_t i = i0 + lane;
        bool freed = false;
        bool bad = false;
        int64_t segment = -1;
        if (i < n) {
            const uint32_t e = arr<const uint32_t>(p.slot_writes)[i];
            const uint32_t action = arr<const uint32_t>(p.g_action)[e];
            if (action == kActUpdate || action == kActDelete) {
                const uint64_t block = meta_block(t, arr<const uint64_t>(p.g_meta)[e]);
                if (h.segmented != 0) {
                    segment = seg_clear(h, block);
                    freed = segment >= 0;
                } else {
                    freed = heap_free(h, block);
                }
                bad = !freed;
            }
        }
        if (h.segmented != 0) {
            seg_count_frees(h, segment);
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
