// Operations on one key within a batch, combined (why: under skew hundreds of operations of a batch
// hit one hot key; run one by one they would retry CASes on the same slot across PCIe, warp against
// warp). A first kernel groups a batch's operations by key in a device-memory table; the batch
// kernel then runs each group of two or more as one unit in one warp: it reads the key's state from
// the pool once, applies the members to that state in registers (every member gets the outcome and
// value of a serial execution), and writes only the net effect to the pool with the usual protocol:
// one update CAS, one delete CAS, or one insert. If the CAS fails, another batch's kernel changed the
// key meanwhile, and the group runs again from the new state, so each group is atomic.
#pragma once
#include "op_common.cuh"
#include "same_key_rules.cuh"

namespace gphash {

__device__ __forceinline__ bool batch_keys_equal(const uint8_t* a, const uint8_t* b, int key_size) {
    for (int i = 0; i < key_size; ++i) {
        if (a[i] != b[i]) {
            return false;
        }
    }
    return true;
}

// One thread per operation: claims or finds the key's entry, pushes itself on the entry's list.
__device__ void group_batch(const TableParams& t, const BatchParams& b) {
    const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    if (i >= b.n) {
        return;
    }
    auto* op_group = reinterpret_cast<uint64_t*>(b.op_group);
    if (b.retry_only != 0 && (reinterpret_cast<const uint8_t*>(b.codes)[i] & 0x7f) != kNeedResize) {
        op_group[i] = kNoOp;
        return;
    }
    const int ks = static_cast<int>(t.key_size);
    const auto* keys = reinterpret_cast<const uint8_t*>(b.keys);
    const uint8_t* key = keys + i * ks;
    auto* owner = reinterpret_cast<unsigned long long*>(b.group_owner);
    const uint64_t mask = b.group_capacity - 1;
    uint64_t s = hash_key<false>(key, ks, t.seed[0]) & mask;
    for (;;) {
        const unsigned long long o = atomicCAS(owner + s, kNoOp, i);
        if (o == kNoOp || batch_keys_equal(keys + o * ks, key, ks)) {
            break;
        }
        s = (s + 1) & mask;
    }
    op_group[i] = s;
    reinterpret_cast<uint64_t*>(b.op_next)[i] =
            atomicExch(reinterpret_cast<unsigned long long*>(b.group_top) + s, static_cast<unsigned long long>(i));
    atomicAdd(reinterpret_cast<unsigned int*>(b.group_count) + s, 1u);
}

// Copies the value the group's state holds (the block the pool's word `pool_meta` names, or operation `src`'s input)
// to operation j's output; a pool value is read across PCIe once per group, then from the first copy.
__device__ __forceinline__ void group_copy_out(OpContext& c, uint64_t j, uint64_t src, uint64_t pool_meta,
                                               uint64_t& pool_copy) {
    const uint64_t vs = static_cast<uint64_t>(c.t.value_size);
    uint8_t* out = reinterpret_cast<uint8_t*>(c.b.out);
    if (src != kNoOp) {
        warp_copy(out + j * vs, reinterpret_cast<const uint8_t*>(c.b.values) + src * vs, vs);
    } else if (pool_copy != kNoOp) {
        warp_copy(out + j * vs, out + pool_copy * vs, vs);
    } else {
        // The pool's value may be shorter than the value size (format 3): zeros after it.
        warp_copy_padded(out + j * vs, c.pool + meta_value_at(c.t, pool_meta), meta_value_length(c.t, c.pool, pool_meta), vs);
        pool_copy = j;
    }
}

__device__ __forceinline__ void group_set_codes(const BatchParams& b, uint64_t top, uint8_t code) {
    const auto* next = reinterpret_cast<const uint64_t*>(b.op_next);
    for (uint64_t j = top; j != kNoOp; j = next[j]) {
        if (lane_id() == 0) {
            reinterpret_cast<uint8_t*>(b.codes)[j] = code;
        }
    }
}

// Runs the group whose members start at `top` (c is the group owner's operation: its key and hashes).
__device__ void op_group_combined(OpContext& c, uint64_t top) {
    const auto* kinds = reinterpret_cast<const uint8_t*>(c.b.kinds);
    const auto* next = reinterpret_cast<const uint64_t*>(c.b.op_next);
    const auto* blocks = reinterpret_cast<const uint64_t*>(c.b.blocks);
    auto* codes = reinterpret_cast<uint8_t*>(c.b.codes);
    const uint64_t vs = static_cast<uint64_t>(c.t.value_size);
    for (;;) {
        const WindowProbe p = probe_op(c);
        const bool present0 = p.match != 0;
        const int valid = present0 ? __ffs(p.match) - 1 : -1;
        const uint64_t meta0 = present0 ? __shfl_sync(kFullMask, p.meta, valid) : kEmpty;
        bool present = present0;
        uint64_t src = kNoOp;        // the operation whose value is the state's, or kNoOp: the pool's
        uint64_t pool_copy = kNoOp;  // the member whose output already holds the pool value
        for (uint64_t j = top; j != kNoOp; j = next[j]) {
            // The rules of same_key_rules.cuh, member by member; the state before j answers j.
            const int kind = kinds[j];
            const uint8_t code = outcome_of(kind, present);
            if (returns_value(kind, present)) {
                group_copy_out(c, j, src, meta0, pool_copy);
            }
            if (sets_source(kind, present)) {
                src = kind == kDelete ? kNoOp : j;
            }
            if (sets_presence(kind)) {
                present = presence_set_by(kind);
            }
            if (lane_id() == 0) {
                codes[j] = code;
            }
        }
        __syncwarp();
        if (present == present0 && src == kNoOp) {
            return;  // nothing to write: reads only, or every write was refused
        }
        if (present0 && !present) {  // net effect: delete
            if (!replace_valid_item(c, p, valid, meta0, kEmpty)) {
                continue;
            }
            if (lane_id() == valid) {
                count(c.b, kItemsRemoved, 1);
            }
            remove_duplicates(c, p, valid);
            return;
        }
        // The final value is operation src's: write it to src's block.
        c.block = blocks[src];
        write_value_block(c.t, c.pool, c.block, reinterpret_cast<const uint8_t*>(c.b.values) + src * vs, vs);
        if (present0) {  // net effect: update
            if (!replace_valid_item(c, p, valid, meta0, meta_publish(c.t, meta_fingerprint(meta0), c.block))) {
                continue;
            }
            if (lane_id() == valid) {
                codes[src] |= kConsumedFlag;
            }
            remove_duplicates(c, p, valid);
            return;
        }
        // Net effect: insert.
        const int target = least_loaded_empty_lane(p);
        if (target < 0) {
            group_set_codes(c.b, top, kNeedResize);
            if (lane_id() == 0) count(c.b, kNeedResizeCount, 1);
            return;
        }
        const uint64_t slot = __shfl_sync(kFullMask, p.slot, target);
        bool won = false;
        if (lane_id() == target) {
            won = claim_slot(c.pool, slot);
        }
        if (!__shfl_sync(kFullMask, won, target)) {
            continue;
        }
        write_slot_key<false>(c.t, c.pool, slot, c.key);
        if (lane_id() == 0) {
            publish_slot(c.pool, slot, meta_publish(c.t, c.k.fp, c.block));
            count(c.b, kItemsAdded, 1);
            codes[src] |= kConsumedFlag;
        }
        __syncwarp();
        mirror_lane(c, p, target);
        // A racing insert of the key in another batch: the valid copy stays, the others go (§3.2.2).
        const WindowProbe after = probe_pool(c);
        if (after.match != 0) {
            remove_duplicates(c, after, __ffs(after.match) - 1);
        }
        return;
    }
}

}  // namespace gphash
