package org.gphash.index;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.format.SlotMeta;
import org.gphash.table.BlockHeap;
import org.gphash.table.EpochGate;
import org.gphash.table.OpStatus;
import org.gphash.table.Probe;
import org.gphash.table.SlotProtocol;
import org.gphash.table.TableLayout;

/**
 * Runs a batch with {@link org.gphash.Durability#PER_BATCH}: its writes are persisted together, in
 * two phases, instead of three persists per operation.
 *
 * <ol>
 *   <li><b>Prepare</b>, in batch order: every operation that carries a value writes it into a free
 *   block of its own. On persistent memory (where a write may tear below a slot) every insert (or
 *   put) whose key is absent also claims a slot (EMPTY to INSERT) and writes its key there. Nothing
 *   published refers to any of this yet.
 *   <li><b>Persist phase 1</b>: those values (and keys), in one msync (or a flush of each and one drain).
 *   <li><b>Apply</b>, in batch order: each operation runs as a single operation would (the same probe,
 *   CAS and duplicate rule, so later operations of the batch see earlier ones), using its prepared
 *   block and slot, and records the meta words it stores instead of persisting each. On a disk an
 *   insert claims its slot here and writes its key beside the meta word: slot and key lie in one
 *   sector, which the disk writes whole, so they reach it together.
 *   <li><b>Persist phase 2</b>: those meta words (and keys), in one msync (or flushes and one drain).
 *   <li><b>Reclaim</b>: the blocks the batch unlinked go to the epoch gate only now, so no block is
 *   reused while a crash could still bring back a meta word that refers to it.
 * </ol>
 *
 * No meta word is stored before the values and keys it refers to are durable, so a crash at any
 * moment, with any page written back early, leaves every slot EMPTY, INSERT (cleared by recovery) or
 * a whole item. The round holds one epoch throughout, so no resize moves a claimed slot; a round
 * that needs a resize or more heap ends at that operation, applies and persists what it prepared,
 * and the next round starts after the growth. Up to a round's operations may leave INSERT slots at
 * a crash, so the header's in-flight bound is raised to cover them first.
 *
 * <p>An operation that finds in its apply step that it needs a slot it did not claim (an update that
 * became an insert because an earlier operation deleted the key) claims one and persists its key on
 * the spot, as a single operation does. Not thread-safe: one per thread.
 *
 * <p>On another engine's pool ({@link CpuOperations}: its table does not grow itself) a round that
 * needs a resize or more heap ends there as well, and so does the batch: {@link #run} returns the
 * operation that needs the owner, which changed nothing, as none after it did. Each write applied
 * there marks the buckets it may have changed in the owner's {@link DirtyBuckets}.
 */
final class PhasedBatch {

    private final CpuTable table;
    private final BatchPhases phases = new BatchPhases();

    PhasedBatch(CpuTable table) {
        this.table = table;
    }

    /**
     * Runs the operations of {@code batch} into {@code result} (reset for it). {@link #next()} says
     * how far it got when an exception escapes (the operations before it were applied and are durable).
     *
     * @param dirty where each write marks the buckets it may have changed (another engine's pool), else null
     * @return {@code batch.size()}, or, on a table that does not grow itself, the first operation that
     *         needs a resize or more heap: it and those after it were not run
     */
    int run(Batch batch, BatchResult result, DirtyBuckets dirty) {
        next = 0;
        needsOwner = false;
        int n = batch.size();
        this.expected = batch.hasConditionalOperations() ? batch.expectedValues() : null;
        this.dirty = dirty;
        this.result = result;
        this.batch = batch;
        this.packedIn = batch.valuesPacked();
        this.packedOut = result.valuesPacked();
        MemorySegment kinds = batch.kinds();
        MemorySegment keys = batch.keys();
        MemorySegment values = batch.values();
        MemorySegment codes = result.outcomeCodes();
        try {
            while (next < n && !needsOwner) {
                next = round(kinds, keys, values, codes, next, Math.min(n, next + MAX_ROUND_OPS), batch.keySize(),
                        batch.valueSize());
            }
        } finally {
            this.expected = null;
            this.dirty = null;
            this.result = null;
            this.batch = null;
        }
        return next;
    }

    /** Where {@link #run}'s writes mark the buckets they change, while it runs (null on the engine's own pool). */
    private DirtyBuckets dirty;
    /** Whether the last round stopped at an operation that needs a resize or more heap from the pool's owner. */
    private boolean needsOwner;

    /** The batch's expected values (read by its conditional operations) while {@link #run} runs. */
    private MemorySegment expected;

    /** The batch and result of {@link #run}, while it runs. */
    private Batch batch;
    private BatchResult result;
    /** Whether the batch's values, and the result's, lie packed ({@link Batch#valuesPacked()}): each at its own offset. */
    private boolean packedIn;
    private boolean packedOut;

    /** The length of operation {@code i}'s value. */
    private int valueLength(int i, long v) {
        return packedIn ? batch.valueLength(i) : (int) v;
    }

    /** Where operation {@code i}'s value starts in the batch's values. */
    private long valueOffset(int i, long v) {
        return packedIn ? batch.valueOffset(i) : i * v;
    }

    /**
     * The most operations one round runs. An exclusive phase (a resize, a heap growth, a snapshot)
     * waits for every round in flight, so a round bounds how long every other thread can be held up:
     * 16 threads' batches of 2^18 in one round each held every growth for a whole batch. The batch is
     * still durable when it returns (every round persists before the next starts); two msyncs per round
     * on a disk cost little against a round's work.
     */
    static final int MAX_ROUND_OPS = 16_384;

    /**
     * Operations whose candidate buckets the apply step touches together before it runs them
     * ({@link Probe#touch}): their cache misses overlap. A power of two; 16 operations' buckets (4
     * buckets of 3 lines each for the default geometry) fit in the L1 cache with room to spare; 16
     * ran YCSB-C and the load faster than touching nothing ahead, 8, 32 or 64 (one thread, the 2-core
     * build machine; docs/lab/2026-11-26-host-path-zero-copy.md).
     */
    static final int TOUCH_AHEAD = 16;

    private int next;
    private boolean claimAhead;
    private static final byte GET_ORDINAL = (byte) OpKind.GET.ordinal();

    /** The first operation not applied, after {@link #run} (also when it threw). */
    int next() {
        return next;
    }

    private int round(MemorySegment kinds, MemorySegment keys, MemorySegment values, MemorySegment codes, int from,
                      int n, long k, long v) {
        CpuTable t = table;
        Probe probe = t.probes.get();
        int ops = n - from;
        phases.ensureOps(ops);
        claimAhead = t.table.file.persister().atomicWriteUnit() < t.table.geometry.slotSize();
        int stop = OpStatus.RETRY;  // RETRY: no growth needed
        TableLayout layout;
        long observedBlocks;
        boolean heapShortForNewItem = false;
        int heapShortClass = t.table.fullClass;
        int end;
        t.table.phasedOpsInFlight.addAndGet(ops);
        EpochGate.Participant p = t.table.gate.enter();
        try {
            // Before anything is claimed: a crash may leave every claim of every running round.
            t.table.headers.admitOpsInFlight(t.table.phasedOpsInFlight.get() + t.table.gate.admittedWriters());
            MemorySegment pool = t.table.file.segment();
            layout = t.layout();
            observedBlocks = t.table.blocks.totalBlocks();

            // ---- prepare
            for (end = from; end < n; end++) {
                int r;
                try {
                    r = prepare(pool, layout, probe, kinds, keys, values, end, end - from, n, k, v);
                } catch (RuntimeException | Error e) {
                    // A probe refused (a table region changed after a clean close): nothing of this
                    // round was applied; give back what it prepared.
                    giveBack(pool, probe, from, from, end);
                    phases.clear();
                    next = from;
                    throw e;
                }
                if (r != OpStatus.RETRY) {
                    stop = r;
                    heapShortForNewItem = probe.heapShortForNewItem;
                    heapShortClass = probe.heapShortClass;
                    break;
                }
            }
            t.table.file.persister().persistAll(pool, phases.valuesAndKeys);

            // ---- apply
            int applied = from;
            probe.phases = phases;
            try {
                for (; applied < end; applied++) {
                    if (((applied - from) & (TOUCH_AHEAD - 1)) == 0) {
                        for (int ahead = applied, last = Math.min(end, applied + TOUCH_AHEAD); ahead < last; ahead++) {
                            probe.touch(pool, layout, keys, ahead * k);
                        }
                    }
                    int r = apply(pool, layout, p, probe, kinds, keys, values, applied, applied - from, k, v);
                    if (r == OpStatus.NEED_RESIZE || r == OpStatus.NEED_HEAP) {
                        stop = r;
                        heapShortForNewItem = probe.heapShortForNewItem;
                        heapShortClass = probe.heapShortClass;
                        break;
                    }
                    codes.set(ValueLayout.JAVA_BYTE, applied, (byte) r);
                    if (dirty != null && kinds.get(ValueLayout.JAVA_BYTE, applied) != GET_ORDINAL) {
                        CpuOperations.markTouched(probe, layout, dirty);
                    }
                }
            } finally {
                probe.phases = null;
                // What was prepared and not applied (a growth, or an exception) is given back.
                giveBack(pool, probe, from, applied, end);
                for (int i = 0; i < phases.retiredCount(); i++) {
                    t.table.gate.retire(p, phases.retired(i));
                }
                phases.clear();
                next = applied;
            }
            end = applied;
        } finally {
            returnGrant();  // inside the epoch: no growth may rebuild the bitmap before these bits are cleared
            t.table.gate.exit(p);
            t.table.phasedOpsInFlight.addAndGet(-ops);
        }
        if ((stop == OpStatus.NEED_RESIZE || stop == OpStatus.NEED_HEAP) && !t.grows()) {
            needsOwner = true;
        } else if (stop == OpStatus.NEED_RESIZE) {
            t.resize(layout);
        } else if (stop == OpStatus.NEED_HEAP) {
            t.growHeap(observedBlocks, heapShortClass, heapShortForNewItem ? BlockHeap.UPDATE_RESERVE : 0);
        }
        return end;
    }

    /**
     * Stages operation {@code i}'s value and, for an insert of an absent key, claims a slot and
     * writes the key. RETRY means done (the name reused for "go on"); NEED_RESIZE or NEED_HEAP end
     * the round before this operation.
     */
    private int prepare(MemorySegment pool, TableLayout layout, Probe probe, MemorySegment kinds, MemorySegment keys,
                        MemorySegment values, int i, int slotIndex, int n, long k, long v) {
        CpuTable t = table;
        phases.staged[slotIndex] = -1;
        phases.claimed[slotIndex] = -1;
        OpKind kind = OpKind.ofOrdinal(kinds.get(ValueLayout.JAVA_BYTE, i));
        if (!kind.hasValue()) {
            return OpStatus.RETRY;
        }
        long ko = i * k;
        // Claiming ahead is for media that tear below a slot (persistent memory: 8-byte units); on a
        // disk the key goes with its meta word in phase 2, so the apply step claims as a single
        // operation does and phase 1 touches only the value heap (no table page is flushed, and so
        // write-protected, between the claim and the publish).
        boolean mayInsert = claimAhead && (kind == OpKind.INSERT || kind == OpKind.PUT);
        long slot = -1;
        if (mayInsert) {
            probe.hash(keys, ko);
            slot = claimSlot(pool, layout, probe, keys, ko);
            if (slot == -2) {
                return OpStatus.NEED_RESIZE;
            }
        }
        boolean newItem = kind == OpKind.INSERT || kind == OpKind.PUT;  // may be: leave the update reserve
        int length = valueLength(i, v);
        int valueClass = t.table.values.classOf(length);
        // Values of the value size come from the round's grant; a shorter one (a format 3 pool's) takes a
        // block of its own class.
        long block = valueClass == t.table.fullClass ? takeBlock(newItem, i, n)
                : t.table.blocks.allocate(valueClass, newItem ? BlockHeap.UPDATE_RESERVE : 0);
        if (block < 0) {
            probe.heapShortForNewItem = newItem;
            probe.heapShortClass = valueClass;
            if (slot >= 0) {
                SlotProtocol.unclaim(pool, slot);
            }
            return OpStatus.NEED_HEAP;
        }
        long vo = valueOffset(i, v);
        int written = t.table.values.write(pool, block, values, vo, length);
        if (probe.checksum != null) {
            probe.checksum.store(pool, block, probe.checksum.of(keys, ko, values, vo, length));
            written += probe.checksum.extraBytes();
        }
        phases.valuesAndKeys.add(block, written);
        phases.staged[slotIndex] = block;
        phases.claimed[slotIndex] = slot;
        return OpStatus.RETRY;
    }

    /**
     * A free block for operation {@code i}'s value (an operation of a round that ends before {@code n}),
     * or -1 when the heap must grow. Blocks come from a grant claimed up to {@link #GRANT} at a time
     * and always leaving {@link BlockHeap#UPDATE_RESERVE} free, so a new item may take any of them; an
     * update that finds the grant empty and the heap down to the reserve takes a reserve block alone.
     */
    private long takeBlock(boolean newItem, int i, int n) {
        if (grantNext == grantSize) {
            grantNext = 0;
            int full = table.table.fullClass;  // a batch's values have the pool's value size
            grantSize = table.table.blocks.allocateNear(grant, Math.min(GRANT, n - i), full, BlockHeap.UPDATE_RESERVE);
            if (grantSize == 0) {
                return newItem ? -1 : table.table.blocks.allocate(full, 0);
            }
        }
        return grant[grantNext++];
    }

    /** Blocks a round takes from the heap at once ({@link #takeBlock}). */
    static final int GRANT = 64;

    private final long[] grant = new long[GRANT];
    private int grantNext;
    private int grantSize;

    /** Frees the blocks of the grant the round did not use (never published: nothing refers to them). */
    private void returnGrant() {
        if (grantNext < grantSize) {
            table.table.blocks.freeAll(grant, grantNext, grantSize);
        }
        grantNext = 0;
        grantSize = 0;
    }

    /**
     * For an insert: a slot claimed for the key, with the key written into it; -1 when the key is
     * present (or a claim kept losing races: the apply step then claims as a single operation does);
     * -2 when its buckets are full.
     */
    private long claimSlot(MemorySegment pool, TableLayout layout, Probe probe, MemorySegment keys, long ko) {
        for (int attempt = 0; attempt < 8; attempt++) {
            probe.scan(pool, layout, keys, ko);
            if (probe.matchCount > 0) {
                return -1;
            }
            long slot = probe.leastLoadedEmptySlot();
            if (slot < 0) {
                return -2;
            }
            if (SlotProtocol.claim(pool, slot)) {
                SlotProtocol.writeKey(pool, slot, keys, ko, table.table.geometry.keySize());
                phases.valuesAndKeys.add(SlotProtocol.keyAt(slot), table.table.geometry.keyStride());
                return slot;
            }
        }
        return -1;
    }

    /** Runs operation {@code i} with its prepared block and slot; its outcome, or NEED_RESIZE / NEED_HEAP. */
    private int apply(MemorySegment pool, TableLayout layout, EpochGate.Participant p, Probe probe,
                      MemorySegment kinds, MemorySegment keys, MemorySegment values, int i, int slotIndex, long k,
                      long v) {
        CpuTable t = table;
        OpKind kind = OpKind.ofOrdinal(kinds.get(ValueLayout.JAVA_BYTE, i));
        long ko = i * k;
        long vo = valueOffset(i, v);
        boolean conditional = kind.isConditional();
        long eo = conditional && packedIn ? batch.expectedOffset(i) : i * v;
        // A value read goes to its place of the value size, or, in packed results, after those read so far.
        boolean reads = kind == OpKind.GET || kind == OpKind.READ_MODIFY_WRITE;
        long oo = reads && packedOut ? result.reserveValue((int) v) : i * v;
        MemorySegment out = result.valueBlock();
        probe.hash(keys, ko);
        probe.valueLength = valueLength(i, v);
        probe.expectedLength = conditional && packedIn ? batch.expectedLength(i) : (int) v;
        probe.pendingClass = t.table.values.classOf(probe.valueLength);
        probe.pendingBlock = phases.staged[slotIndex];
        probe.claimedSlot = phases.claimed[slotIndex];
        phases.staged[slotIndex] = -1;
        phases.claimed[slotIndex] = -1;
        int r;
        try {
            do {
                r = switch (kind) {
                    case GET -> t.reader.read(pool, layout, probe, keys, ko, out, oo);
                    case PUT -> t.attemptInsert(pool, layout, p, probe, keys, ko, values, vo, true);
                    case INSERT -> t.attemptInsert(pool, layout, p, probe, keys, ko, values, vo, false);
                    case UPDATE -> t.attemptUpdate(pool, layout, p, probe, keys, ko, values, vo, null, 0);
                    case READ_MODIFY_WRITE -> t.attemptUpdate(pool, layout, p, probe, keys, ko, values, vo, out, oo);
                    case DELETE -> t.attemptDelete(pool, layout, p, probe, keys, ko);
                    case COMPARE_AND_SET -> t.attemptConditional(pool, layout, p, probe, keys, ko, values, vo, expected, eo);
                    case COMPARE_AND_DELETE -> t.attemptConditional(pool, layout, p, probe, keys, ko, null, 0, expected, eo);
                };
            } while (r == OpStatus.RETRY);
            if (r == OpStatus.FOUND || r == OpStatus.REPLACED) {
                keepRead(result, packedOut, out, i, v, probe.readLength);
            }
        } finally {
            // A block or slot the operation did not use (the key existed, or was absent) was never published.
            release(pool, probe, probe.pendingBlock, probe.claimedSlot);
            probe.pendingBlock = -1;
            probe.claimedSlot = -1;
        }
        return r;
    }

    /**
     * Keeps the value of {@code length} bytes just read for operation {@code i} in {@code result}: in
     * packed results, as the value reserved for it; else in its place of the value size {@code v}
     * in {@code out}, the rest zeroed where it is shorter and its length recorded.
     */
    static void keepRead(BatchResult result, boolean packed, MemorySegment out, int i, long v, int length) {
        if (packed) {
            result.commitValue(i, length);
        } else if (length < v) {
            out.asSlice(i * v + length, v - length).fill((byte) 0);
            result.setValueLength(i, length);
        }
    }

    /**
     * Gives back what operations {@code [a, b)} of the round that starts at {@code from} prepared,
     * and persists the meta words of the round (applied ones and slots given back alike).
     */
    private void giveBack(MemorySegment pool, Probe probe, int from, int a, int b) {
        for (int i = a; i < b; i++) {
            release(pool, probe, phases.staged[i - from], phases.claimed[i - from]);
        }
        table.table.file.persister().persistAll(pool, phases.metas);
    }

    /** Gives back a prepared block (never published: no reader) and a claimed slot. */
    private void release(MemorySegment pool, Probe probe, long block, long slot) {
        if (block >= 0) {
            table.table.revokeChecksum(block);
            table.table.blocks.free(block);
        }
        if (slot >= 0 && SlotProtocol.unclaim(pool, slot)) {
            phases.metas.add(slot, SlotMeta.BYTES);
        }
    }
}
