package org.gphash.index;

import org.gphash.spi.CrashPoint;
import org.gphash.spi.CrashHook;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;

import org.gphash.ItemChecksumException;
import org.gphash.PoolFullException;
import org.gphash.persistence.PoolFile;

/**
 * The GPHash table executed by Java threads on the mapped pool: lock-free single-key operations
 * (GPHash §3.2.3), resizing, and value heap growth.
 *
 * <p>Slot protocol of an insert, in the order every crash point relies on: the value is written to
 * a free block and persisted; the slot is CASed EMPTY to INSERT; the key is written and persisted;
 * fingerprint and value offset are published in one store and persisted. Update writes and
 * persists the new value, then CASes the meta word from the old offset to the new one. Delete CASes
 * the meta word to EMPTY. A crash leaves each slot EMPTY, INSERT (cleared by recovery) or a whole
 * item; unreferenced blocks are free by definition ({@link ValueHeap}).
 *
 * <p>Duplicates (two racing inserts of one key) follow §3.2.2: the valid item is the first in
 * candidate order (highest level, lowest bucket, lowest slot). An insert checks after publishing;
 * if a more valid copy exists it removes its own copy and reports the key as existing, otherwise
 * it removes the others. Every operation that meets duplicates removes them.
 */
final class CpuTable {

    final PoolFile file;
    final Geometry geometry;
    final HeaderStore headers;
    final ValueHeap heap;
    final EpochGate gate;
    final CrashHook hook;
    final long maxPoolBytes;
    final LongAdder size = new LongAdder();
    private final long[] seeds;
    private volatile TableLayout layout;
    private final LongAdder heapGrowths = new LongAdder();
    /** Whole-table passes run elsewhere (the GPU), or null to run them here. */
    final TableKernels kernels;
    /** ON_CLOSE_OR_SYNC: operations persist nothing ({@link #sync} and close do). */
    final boolean persistOnSyncOnly;
    /** Operations of batches in their phases now (they may leave INSERT slots at a crash). */
    final java.util.concurrent.atomic.AtomicLong phasedOpsInFlight = new java.util.concurrent.atomic.AtomicLong();
    final ThreadLocal<Probe> probes;

    CpuTable(PoolFile file, HeaderStore headers, CrashHook hook, long maxPoolBytes, TableKernels kernels,
             org.gphash.Durability durability) {
        this.kernels = kernels;
        this.persistOnSyncOnly = durability == org.gphash.Durability.ON_CLOSE_OR_SYNC;
        this.file = file;
        this.headers = headers;
        this.hook = hook;
        this.maxPoolBytes = maxPoolBytes;
        PoolHeader h = headers.current();
        this.geometry = h.geometry();
        this.seeds = h.seeds();
        this.heap = new ValueHeap(geometry.valueStride(), h.heapChunks());
        this.gate = new EpochGate(this::reclaim, headers::admitOpsInFlight);
        this.layout = TableLayout.of(h);
        this.probes = ThreadLocal.withInitial(this::newProbe);
    }

    Probe newProbe() {
        return new Probe(geometry, seeds);
    }

    TableLayout layout() {
        return layout;
    }

    void refreshLayout() {
        layout = TableLayout.of(headers.current());
    }

    private void reclaim(long valueOffset) {
        hook.reached(CrashPoint.VALUE_RECLAIMED);
        heap.free(valueOffset);
    }

    private void persist(MemorySegment pool, long offset, long length) {
        file.persister().persist(pool, offset, length);
    }

    // Where an operation's persists go: now (PER_OPERATION, and single operations), into the phases
    // of its batch (PER_BATCH), or nowhere (ON_CLOSE_OR_SYNC: sync and close persist everything).

    private void persistValue(MemorySegment pool, long block, long length) {
        if (!persistOnSyncOnly) {
            persist(pool, block, length);  // in a batch the value was staged (and persisted) in its first phase
        }
    }

    /**
     * A key written into a slot claimed now: durable before the meta word that publishes it. In a
     * batch, a slot that lies inside one unit the medium writes whole ({@link
     * org.gphash.persistence.Persister#atomicWriteUnit}: a disk sector) takes its key to the disk with
     * its meta word, in the batch's second phase; otherwise the key is persisted now.
     */
    private void persistKey(Probe probe, MemorySegment pool, long slot) {
        if (persistOnSyncOnly) {
            return;
        }
        if (probe.phases != null && keyRidesWithMeta(slot)) {
            probe.phases.metas.add(slot + SlotMeta.BYTES, geometry.keyStride());
        } else {
            persist(pool, slot + SlotMeta.BYTES, geometry.keyStride());
        }
    }

    /** Whether slot {@code slot}, meta word and key, lies inside one unit the medium writes whole. */
    boolean keyRidesWithMeta(long slot) {
        long unit = file.persister().atomicWriteUnit();
        return slot / unit == (slot + geometry.slotSize() - 1) / unit;
    }

    private void persistMeta(Probe probe, MemorySegment pool, long slot) {
        if (probe.phases != null) {
            probe.phases.metas.add(slot, SlotMeta.BYTES);
        } else if (!persistOnSyncOnly) {
            persist(pool, slot, SlotMeta.BYTES);
        }
    }

    /**
     * A block an operation unlinked goes to reclamation; in a batch only once the batch's meta words
     * are durable (until then a crash may bring back the meta word that refers to it).
     */
    private void retire(EpochGate.Participant p, Probe probe, long block) {
        if (probe.phases != null) {
            probe.phases.retire(block);
        } else {
            gate.retire(p, block);
        }
    }

    /** Every acknowledged operation durable: operations drained, the committed pool persisted. */
    void sync() {
        gate.runExclusive(this::persistEverything);
    }

    /** With operations drained: one persist of the whole committed pool. */
    void persistEverything() {
        persist(file.segment(), 0, Math.min(file.mappedSize(), headers.current().fileLength()));
    }

    // ------------------------------------------------------------------ single-key operations

    /** Copies the value of {@code key} into {@code out}; returns FOUND or NOT_FOUND. */
    int get(MemorySegment key, long keyOffset, MemorySegment out, long outOffset) {
        Probe probe = probes.get();
        probe.hash(key, keyOffset);
        EpochGate.Participant p = gate.enter();
        try {
            return attemptGet(file.segment(), layout, probe, key, keyOffset, out, outOffset);
        } finally {
            gate.exit(p);
        }
    }

    /** {@link #get} inside an epoch the caller holds, with the key hashed into {@code probe}. */
    int attemptGet(MemorySegment pool, TableLayout t, Probe probe, MemorySegment key, long keyOffset,
                   MemorySegment out, long outOffset) {
        probe.scan(pool, t, key, keyOffset);
        if (probe.matchCount == 0) {
            return OpStatus.NOT_FOUND;
        }
        long block = SlotMeta.valueOffset(probe.matchMeta[0]);
        checkItem(pool, probe, probe.matchSlot[0], block, key, keyOffset);
        MemorySegment.copy(pool, block, out, outOffset, geometry.valueSize());
        return OpStatus.FOUND;
    }

    /** Inserts if absent: INSERTED or EXISTS. */
    int insert(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset) {
        return write(Kind.INSERT, key, keyOffset, value, valueOffset);
    }

    /** Inserts or replaces: INSERTED or UPDATED. */
    int upsert(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset) {
        return write(Kind.UPSERT, key, keyOffset, value, valueOffset);
    }

    /** Replaces if present: UPDATED or NOT_FOUND. */
    int update(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset) {
        return write(Kind.UPDATE, key, keyOffset, value, valueOffset);
    }

    /** Removes: DELETED or NOT_FOUND. */
    int delete(MemorySegment key, long keyOffset) {
        return write(Kind.DELETE, key, keyOffset, null, 0);
    }

    /**
     * Copies the value of {@code key} into {@code out} and replaces it with {@code value}: REPLACED
     * or NOT_FOUND. The copy is taken from the block the CAS swaps out, so it is exactly the value
     * replaced (the block cannot be reused before this operation leaves its epoch).
     */
    int readModifyWrite(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset,
                        MemorySegment out, long outOffset) {
        return write(Kind.READ_MODIFY_WRITE, key, keyOffset, value, valueOffset, out, outOffset);
    }

    enum Kind { INSERT, UPSERT, UPDATE, DELETE, READ_MODIFY_WRITE }

    private int write(Kind kind, MemorySegment key, long keyOffset, MemorySegment value, long valueOffset) {
        return write(kind, key, keyOffset, value, valueOffset, null, 0);
    }

    private int write(Kind kind, MemorySegment key, long keyOffset, MemorySegment value, long valueOffset,
                      MemorySegment out, long outOffset) {
        Probe probe = probes.get();
        probe.hash(key, keyOffset);
        probe.pendingBlock = -1;
        try {
            for (;;) {
                TableLayout observedLayout;
                long observedBlocks;
                int r;
                EpochGate.Participant p = gate.enter();
                try {
                    MemorySegment pool = file.segment();
                    observedLayout = layout;
                    observedBlocks = heap.totalBlocks();
                    r = switch (kind) {
                        case INSERT -> attemptInsert(pool, observedLayout, p, probe, key, keyOffset, value, valueOffset, false);
                        case UPSERT -> attemptInsert(pool, observedLayout, p, probe, key, keyOffset, value, valueOffset, true);
                        case UPDATE -> attemptUpdate(pool, observedLayout, p, probe, key, keyOffset, value, valueOffset, null, 0);
                        case READ_MODIFY_WRITE -> attemptUpdate(pool, observedLayout, p, probe, key, keyOffset, value, valueOffset,
                                out, outOffset);
                        case DELETE -> attemptDelete(pool, observedLayout, p, probe, key, keyOffset);
                    };
                } finally {
                    gate.exit(p);
                }
                if (r == OpStatus.NEED_RESIZE) {
                    resize(observedLayout);
                } else if (r == OpStatus.NEED_HEAP) {
                    growHeap(observedBlocks, probe.heapShortForNewItem ? ValueHeap.UPDATE_RESERVE : 0);
                } else if (r != OpStatus.RETRY) {
                    return r;
                }
            }
        } finally {
            if (probe.pendingBlock >= 0) {
                releasePending(probe);
            }
        }
    }

    /**
     * With item checksums, refuses to return a value whose checksum does not match its key and
     * value (the pool's bytes were changed by something other than the engine).
     */
    private void checkItem(MemorySegment pool, Probe probe, long slot, long block, MemorySegment key, long keyOffset) {
        ItemChecksum c = probe.checksum;
        if (c == null) {
            return;
        }
        int stored = c.stored(pool, block);
        int computed = c.of(key, keyOffset, pool, block);
        if (stored != computed) {
            throw new ItemChecksumException("pool " + file.path() + ": the item in slot " + slot + " (value block at "
                    + block + ") fails its checksum (stored " + Integer.toHexString(stored) + ", computed "
                    + Integer.toHexString(computed) + "): something other than the engine changed the pool; the value "
                    + "is not returned. `gphash check --deep` lists every such item");
        }
    }

    /** A block that was written but never published has no readers: it can be freed at once. */
    private void releasePending(Probe probe) {
        EpochGate.Participant p = gate.enter();
        try {
            heap.free(probe.pendingBlock);
            probe.pendingBlock = -1;
        } finally {
            gate.exit(p);
        }
    }

    /**
     * Writes the caller's value into a block of its own (once per operation) and persists it. A new
     * item leaves {@link ValueHeap#UPDATE_RESERVE} blocks for updates.
     */
    boolean stageValue(MemorySegment pool, Probe probe, MemorySegment key, long keyOffset, MemorySegment value,
                               long valueOffset, CrashPoint point) {
        if (probe.pendingBlock >= 0) {
            return true;
        }
        boolean newItem = point == CrashPoint.INSERT_VALUE_PERSISTED;
        long block = heap.allocate(newItem ? ValueHeap.UPDATE_RESERVE : 0);
        probe.heapShortForNewItem = newItem;
        if (block < 0) {
            return false;
        }
        MemorySegment.copy(value, valueOffset, pool, block, geometry.valueSize());
        int written = geometry.valueSize();
        if (probe.checksum != null) {
            // With the value, before anything publishes it: a published item's checksum always matches.
            probe.checksum.store(pool, block, probe.checksum.of(key, keyOffset, value, valueOffset));
            written += ItemChecksum.BYTES;
        }
        persistValue(pool, block, written);
        probe.pendingBlock = block;
        hook.reached(point);
        return true;
    }

    int attemptInsert(MemorySegment pool, TableLayout t, EpochGate.Participant p, Probe probe,
                              MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, boolean upsert) {
        probe.scan(pool, t, key, keyOffset);
        if (probe.matchCount > 0) {
            if (upsert) {
                return swapValue(pool, p, probe, key, keyOffset, value, valueOffset);
            }
            removeDuplicates(pool, p, probe, 1);
            return OpStatus.EXISTS;
        }
        // A batch's first phase may have claimed a slot and persisted the key in it already.
        boolean claimed = probe.claimedSlot >= 0;
        long slot = claimed ? probe.claimedSlot : probe.leastLoadedEmptySlot();
        if (slot < 0) {
            return OpStatus.NEED_RESIZE;
        }
        if (!stageValue(pool, probe, key, keyOffset, value, valueOffset, CrashPoint.INSERT_VALUE_PERSISTED)) {
            return OpStatus.NEED_HEAP;
        }
        if (!claimed) {
            if (!Slots.casMeta(pool, slot, SlotMeta.EMPTY, SlotMeta.INSERT)) {
                return OpStatus.RETRY;
            }
            hook.reached(CrashPoint.INSERT_SLOT_CLAIMED);
            MemorySegment.copy(key, keyOffset, pool, slot + SlotMeta.BYTES, geometry.keySize());
            persistKey(probe, pool, slot);
            hook.reached(CrashPoint.INSERT_ITEM_PERSISTED);
        }
        probe.claimedSlot = -1;
        long meta = SlotMeta.make(probe.fingerprint, probe.pendingBlock);
        Slots.setMeta(pool, slot, meta);
        probe.pendingBlock = -1;
        hook.reached(CrashPoint.INSERT_PUBLISHED);
        persistMeta(probe, pool, slot);
        hook.reached(CrashPoint.INSERT_PERSISTED);
        size.increment();

        // Resolve a race with another insert of the same key (GPHash §3.2.2).
        probe.scan(pool, t, key, keyOffset);
        if (probe.matchCount > 0 && probe.matchSlot[0] != slot) {
            removeDuplicates(pool, p, probe, 1);
            return upsert ? OpStatus.INSERTED : OpStatus.EXISTS;
        }
        removeDuplicates(pool, p, probe, 1);
        return OpStatus.INSERTED;
    }

    int attemptUpdate(MemorySegment pool, TableLayout t, EpochGate.Participant p, Probe probe,
                              MemorySegment key, long keyOffset, MemorySegment value, long valueOffset,
                              MemorySegment previousOut, long previousOutOffset) {
        probe.scan(pool, t, key, keyOffset);
        if (probe.matchCount == 0) {
            return OpStatus.NOT_FOUND;
        }
        if (previousOut == null) {
            return swapValue(pool, p, probe, key, keyOffset, value, valueOffset);
        }
        long previous = SlotMeta.valueOffset(probe.matchMeta[0]);
        checkItem(pool, probe, probe.matchSlot[0], previous, key, keyOffset);
        MemorySegment.copy(pool, previous, previousOut, previousOutOffset, geometry.valueSize());
        int r = swapValue(pool, p, probe, key, keyOffset, value, valueOffset);
        return r == OpStatus.UPDATED ? OpStatus.REPLACED : r;
    }

    /** Points the valid item of the probed key at a new value block (one CAS). */
    private int swapValue(MemorySegment pool, EpochGate.Participant p, Probe probe, MemorySegment key, long keyOffset,
                          MemorySegment value, long valueOffset) {
        if (!stageValue(pool, probe, key, keyOffset, value, valueOffset, CrashPoint.UPDATE_VALUE_PERSISTED)) {
            return OpStatus.NEED_HEAP;
        }
        long slot = probe.matchSlot[0];
        long old = probe.matchMeta[0];
        if (!Slots.casMeta(pool, slot, old, SlotMeta.make(SlotMeta.fingerprint(old), probe.pendingBlock))) {
            return OpStatus.RETRY;
        }
        probe.pendingBlock = -1;
        hook.reached(CrashPoint.UPDATE_SWAPPED);
        persistMeta(probe, pool, slot);
        hook.reached(CrashPoint.UPDATE_PERSISTED);
        if (!probe.valueSharedWithOtherMatch(0)) {
            retire(p, probe, SlotMeta.valueOffset(old));
        }
        removeDuplicates(pool, p, probe, 1);
        return OpStatus.UPDATED;
    }

    int attemptDelete(MemorySegment pool, TableLayout t, EpochGate.Participant p, Probe probe,
                              MemorySegment key, long keyOffset) {
        probe.scan(pool, t, key, keyOffset);
        if (probe.matchCount == 0) {
            return OpStatus.NOT_FOUND;
        }
        long slot = probe.matchSlot[0];
        long old = probe.matchMeta[0];
        if (!Slots.casMeta(pool, slot, old, SlotMeta.EMPTY)) {
            return OpStatus.RETRY;
        }
        hook.reached(CrashPoint.DELETE_CLEARED);
        persistMeta(probe, pool, slot);
        hook.reached(CrashPoint.DELETE_PERSISTED);
        size.decrement();
        if (!probe.valueSharedWithOtherMatch(0)) {
            retire(p, probe, SlotMeta.valueOffset(old));
        }
        removeDuplicates(pool, p, probe, 1);
        return OpStatus.DELETED;
    }

    /** Clears matches {@code from..} of the last probe: copies of the key that are not the valid item. */
    private void removeDuplicates(MemorySegment pool, EpochGate.Participant p, Probe probe, int from) {
        for (int i = from; i < probe.matchCount; i++) {
            long slot = probe.matchSlot[i];
            long meta = probe.matchMeta[i];
            if (Slots.casMeta(pool, slot, meta, SlotMeta.EMPTY)) {
                persistMeta(probe, pool, slot);
                hook.reached(CrashPoint.DUPLICATE_REMOVED);
                size.decrement();
                if (!probe.valueSharedWithOtherMatch(i)) {
                    retire(p, probe, SlotMeta.valueOffset(meta));
                }
            }
        }
    }

    // ------------------------------------------------------------------ resize (GPHash §3.2.3)

    /** Adds a top level and empties the bottom one, unless another thread already resized. */
    void resize(TableLayout observed) {
        gate.runExclusive(() -> {
            if (layout.equals(observed)) {
                long start = System.nanoTime();
                if (persistOnSyncOnly) {
                    // A resize persists the items it moves; the values they refer to must be durable first.
                    persistEverything();
                }
                addTopLevel();
                hook.reached(CrashPoint.RESIZE_STARTED);
                finishResize();
                PoolEvents.resized(file.path(), layout.topLog2(), size.sum(), System.nanoTime() - start);
                if (PoolLog.LOG.isLoggable(System.Logger.Level.DEBUG)) {
                    PoolLog.LOG.log(System.Logger.Level.DEBUG, "gphash: resized pool {0}: top level 2^{1} buckets, {2} "
                            + "levels, {3} items, in {4} ms", file.path(), layout.topLog2(), layout.levelCount(),
                            size.sum(), (System.nanoTime() - start) / 1_000_000);
                }
            }
        });
    }

    /** Allocates, zeroes and commits a top level twice the size of the current one. */
    private void addTopLevel() {
        PoolHeader h = headers.current();
        if (h.levelOffsets().length >= geometry.levels() + PoolHeader.MAX_EXTRA_LEVELS) {
            throw new IllegalStateException("pool " + file.path() + ": a resize would need more than "
                    + PoolHeader.MAX_EXTRA_LEVELS + " extra levels");
        }
        int newLog2 = h.topLog2() + 1;
        long bytes = (1L << newLog2) * geometry.bucketSize();
        long offset = PoolSpace.nextExtent(h);
        long end = offset + bytes;
        long oldFileSize = file.fileSize();
        PoolSpace.ensureLength(file, end, h.fileLength(), maxPoolBytes, "a new top level of 2^" + newLog2 + " buckets");
        if (oldFileSize > offset) {
            // Part of the range held bytes of an earlier growth that was never committed: zero it.
            file.zeroRange(offset, Math.min(oldFileSize, end) - offset);
        }
        MemorySegment pool = file.segment();
        ExtentTag.write(pool, offset, bytes, h.poolId());
        persist(pool, ExtentTag.tagOffset(offset), bytes + ExtentTag.BYTES);
        hook.reached(CrashPoint.RESIZE_LEVEL_ALLOCATED);
        headers.commit(h.withTopLevelAdded(offset, end));
        refreshLayout();
    }

    /**
     * Empties bottom levels into the levels above them until the table has the geometry's number
     * of levels again, committing the smaller level table after each and giving the emptied level's
     * space to the value heap. Runs with operations drained (or during recovery). Returns the
     * number of items moved. Safe to repeat after a crash at any point: an item already copied up is
     * found there and its bottom copy is simply cleared.
     *
     * <p>The paper says rehashing cannot fail. It can: an item's candidate buckets above the bottom
     * level may all be full (likeliest with one level and small buckets, where the new level is the
     * only one above). Then another top level is added and the rehash goes on; the extra bottom
     * level is emptied next.
     */
    long finishResize() {
        long moved = 0;
        while (layout.levelCount() > geometry.levels()) {
            moved += emptyBottomLevel();
        }
        return moved;
    }

    /** The kernels' form of {@link #emptyBottomLevel()}'s loop: pass after pass until nothing is left below. */
    private long rehashWithKernels() {
        long moved = 0;
        for (;;) {
            TableKernels.RehashResult r = kernels.rehashBottom(layout);
            moved += r.moved();
            size.add(-r.dropped());
            for (long block : r.retiredBlocks()) {
                heap.free(block);
            }
            if (r.moved() + r.dropped() > 0) {
                hook.reached(CrashPoint.RESIZE_ITEM_MOVED);
            }
            if (r.unplaced() == 0) {
                return moved;
            }
            addTopLevel();
        }
    }

    private long emptyBottomLevel() {
        if (kernels != null) {
            long moved = rehashWithKernels();
            return commitBottomDropped(moved);
        }
        int bottomDepth = layout.levelCount() - 1;
        long bottom = layout.levelOffset(bottomDepth);
        long buckets = layout.bucketsAtDepth(bottomDepth);
        Probe probe = newProbe();
        int slotSize = geometry.slotSize();
        int slots = geometry.slotsPerBucket();
        long moved = 0;
        TableLayout upper = layout.withoutBottom();
        final int batchBuckets = 1024;
        long[] copied = new long[batchBuckets * slots];
        long[] cleared = new long[batchBuckets * slots];
        for (long first = 0; first < buckets; first += batchBuckets) {
            long last = Math.min(buckets, first + batchBuckets);
            int nCopied = 0;
            int nCleared = 0;
            MemorySegment pool = file.segment();
            for (long b = first; b < last; b++) {
                for (int s = 0; s < slots; s++) {
                    long slot = bottom + b * geometry.bucketSize() + (long) s * slotSize;
                    long meta = Slots.getMeta(pool, slot);
                    if (!SlotMeta.isItem(meta)) {
                        continue;
                    }
                    long keyAt = slot + SlotMeta.BYTES;
                    probe.hash(pool, keyAt);
                    probe.scan(pool, upper, pool, keyAt);
                    if (probe.matchCount > 0) {
                        // Already above (copied before a crash, or an older duplicate): the upper item is valid.
                        if (SlotMeta.valueOffset(probe.matchMeta[0]) != SlotMeta.valueOffset(meta)) {
                            heap.free(SlotMeta.valueOffset(meta));
                        }
                        size.decrement();
                    } else {
                        long target = probe.leastLoadedEmptySlot();
                        while (target < 0) {
                            addTopLevel();
                            upper = layout.withoutBottom();
                            pool = file.segment(); // the file grew: a new mapping
                            probe.scan(pool, upper, pool, keyAt);
                            target = probe.leastLoadedEmptySlot();
                        }
                        Slots.setMeta(pool, target, SlotMeta.INSERT);
                        MemorySegment.copy(pool, keyAt, pool, target + SlotMeta.BYTES, geometry.keySize());
                        Slots.setMeta(pool, target, meta);
                        copied[nCopied++] = target;
                        moved++;
                    }
                    cleared[nCleared++] = slot;
                }
            }
            persistSlots(pool, copied, nCopied, slotSize);
            if (nCopied > 0) {
                hook.reached(CrashPoint.RESIZE_ITEM_COPIED);
            }
            for (int i = 0; i < nCleared; i++) {
                Slots.setMeta(pool, cleared[i], SlotMeta.EMPTY);
            }
            persistSlots(pool, cleared, nCleared, SlotMeta.BYTES);
            if (nCleared > 0) {
                hook.reached(CrashPoint.RESIZE_ITEM_MOVED);
            }
        }
        return commitBottomDropped(moved);
    }

    /** Resize step 4: commits the level table without the (now empty) bottom level, whose space joins the heap. */
    private long commitBottomDropped(long moved) {
        hook.reached(CrashPoint.RESIZE_REHASHED);
        int bottomDepth = layout.levelCount() - 1;
        long bottom = layout.levelOffset(bottomDepth);
        long buckets = layout.bucketsAtDepth(bottomDepth);
        HeapChunk reclaimed = new HeapChunk(bottom, buckets * geometry.bucketSize());
        PoolHeader h = headers.current();
        if (h.heapChunks().size() >= PoolHeader.MAX_HEAP_CHUNKS) {
            throw new PoolFullException("pool " + file.path() + ": the value heap has " + PoolHeader.MAX_HEAP_CHUNKS
                    + " chunks, the most the header holds");
        }
        headers.commit(h.withBottomLevelDropped(reclaimed));
        refreshLayout();
        heap.addChunk(reclaimed);
        hook.reached(CrashPoint.RESIZE_COMMITTED);
        return moved;
    }

    /**
     * Persists many scattered slots with as few persist calls as possible: sorted, and merged where
     * they share a page (one msync per run of pages instead of one per slot).
     */
    private void persistSlots(MemorySegment pool, long[] offsets, int count, int length) {
        if (count == 0) {
            return;
        }
        Arrays.sort(offsets, 0, count);
        long runStart = offsets[0];
        long runEnd = offsets[0] + length;
        for (int i = 1; i < count; i++) {
            long o = offsets[i];
            if (o <= runEnd + PoolSpace.EXTENT_ALIGNMENT) {
                runEnd = Math.max(runEnd, o + length);
            } else {
                persist(pool, runStart, runEnd - runStart);
                runStart = o;
                runEnd = o + length;
            }
        }
        persist(pool, runStart, runEnd - runStart);
    }

    // ------------------------------------------------------------------ value heap growth

    /**
     * Adds a heap chunk, unless another thread already did or reclaiming retired blocks (which
     * draining operations allows) freed more than {@code keep} blocks.
     */
    void growHeap(long observedTotalBlocks, long keep) {
        gate.runExclusive(() -> {
            if (heap.totalBlocks() != observedTotalBlocks || heap.freeBlocks() > keep) {
                return;
            }
            PoolHeader h = headers.current();
            if (h.heapChunks().size() >= PoolHeader.MAX_HEAP_CHUNKS) {
                throw new PoolFullException("pool " + file.path() + ": the value heap has " + PoolHeader.MAX_HEAP_CHUNKS
                        + " chunks, the most the header holds");
            }
            addHeapChunk(0);
        });
    }

    /**
     * Grows the heap until at least {@code blocks} blocks are free (an engine that allocates a whole
     * batch's blocks at once sizes the heap first). Operations must be drained or exclusive.
     */
    void ensureFreeBlocks(long blocks) {
        gate.runExclusive(() -> {
            while (heap.freeBlocks() < blocks) {
                addHeapChunk(blocks - heap.freeBlocks());
            }
        });
    }

    /**
     * Adds a heap chunk of a quarter of the heap so far, and at least {@code minBlocks} blocks and 1 MiB:
     * the heap grows with the data, geometrically enough that growths stay few (the header holds 96
     * chunks) and finely enough that the pool stays within about 1.25x of what it holds.
     */
    private void addHeapChunk(long minBlocks) {
        PoolHeader h = headers.current();
        if (h.heapChunks().size() >= PoolHeader.MAX_HEAP_CHUNKS) {
            throw new PoolFullException("pool " + file.path() + ": the value heap has " + PoolHeader.MAX_HEAP_CHUNKS
                    + " chunks, the most the header holds");
        }
        long started = System.nanoTime();
        long stride = geometry.valueStride();
        long bytes = Geometry.alignUp(Math.max(Math.max(heap.totalBytes() / 4, 1L << 20), minBlocks * stride), stride);
        long offset = PoolSpace.nextExtent(h);
        long end = offset + bytes;
        PoolSpace.ensureLength(file, end, h.fileLength(), maxPoolBytes, "value heap growth by " + bytes + " bytes");
        MemorySegment pool = file.segment();
        ExtentTag.write(pool, offset, bytes, h.poolId());
        persist(pool, ExtentTag.tagOffset(offset), ExtentTag.BYTES);
        hook.reached(CrashPoint.HEAP_GROWN);
        HeapChunk chunk = new HeapChunk(offset, bytes);
        headers.commit(h.withHeapChunk(chunk, end));
        heap.addChunk(chunk);
        heapGrowths.increment();
        PoolEvents.heapGrown(file.path(), bytes, heap.totalBlocks());
        if (PoolLog.LOG.isLoggable(System.Logger.Level.DEBUG)) {
            PoolLog.LOG.log(System.Logger.Level.DEBUG, "gphash: grew the value heap of {0} by {1} bytes to {2} blocks "
                    + "({3} free) in {5} ms; the file is {4} bytes", file.path(), bytes, heap.totalBlocks(),
                    heap.freeBlocks(), end, String.format(java.util.Locale.ROOT, "%.2f", (System.nanoTime() - started) / 1e6));
        }
    }

    long heapGrowths() {
        return heapGrowths.sum();
    }

    /** Runs {@code action} with all operations drained (close, statistics scans). */
    void exclusive(Runnable action) {
        gate.runExclusive(action);
    }
}
