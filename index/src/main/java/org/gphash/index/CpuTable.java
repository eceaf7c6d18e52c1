package org.gphash.index;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

import org.gphash.OpKind;
import org.gphash.format.SlotMeta;
import org.gphash.spi.CrashPoint;
import org.gphash.table.BlockHeap;
import org.gphash.table.EpochGate;
import org.gphash.table.HeapGrower;
import org.gphash.table.OpStatus;
import org.gphash.table.Probe;
import org.gphash.table.SlotProtocol;
import org.gphash.table.Table;
import org.gphash.table.TableLayout;
import org.gphash.table.TableReader;
import org.gphash.table.ValueHeap;

/**
 * The CPU engine's operations on a {@link Table}: lock-free single-key operations (GPHash §3.2.3),
 * run by Java threads on the mapped pool. A full table or heap is handed to the table's {@link
 * Resizer} or {@link HeapGrower}, which both engines share.
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

    final Table table;
    /** The table's read path, which a write's compare and a get share with the GPU engine's host reads. */
    final TableReader reader;
    final ThreadLocal<Probe> probes;
    /**
     * Whether a write that finds its candidate buckets full or the heap short resizes or grows the
     * heap itself (the CPU engine), or returns {@link OpStatus#NEED_RESIZE} or {@link OpStatus#NEED_HEAP}
     * having changed nothing (another engine's pool: its owner grows it, {@link CpuOperations}).
     */
    private final boolean grows;

    CpuTable(TableReader reader, boolean grows) {
        this.table = reader.table();
        this.reader = reader;
        this.probes = reader.probes();
        this.grows = grows;
    }

    TableLayout layout() {
        return table.layout();
    }

    /** {@return whether this table resizes and grows its heap itself ({@link #grows})} */
    boolean grows() {
        return grows;
    }

    private void persist(MemorySegment pool, long offset, long length) {
        table.persist(pool, offset, length);
    }

    /** Adds a top level and empties the bottom one, unless another thread already resized. */
    void resize(TableLayout observed) {
        table.resizer.resize(observed);
    }

    /** Adds a heap region, unless another thread already did or a block of {@code valueClass} can be taken leaving {@code keep}. */
    void growHeap(long observedTotalBlocks, int valueClass, long keep) {
        table.grower.growHeap(observedTotalBlocks, valueClass, keep);
    }

    // Where an operation's persists go: now (PER_OPERATION, and single operations), into the phases
    // of its batch (PER_BATCH), or nowhere (ON_CLOSE_OR_SYNC: sync and close persist everything).

    private void persistValue(MemorySegment pool, long block, long length) {
        if (!table.persistOnSyncOnly) {
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
        if (table.persistOnSyncOnly) {
            return;
        }
        if (probe.phases != null && keyRidesWithMeta(slot)) {
            probe.phases.metas().add(SlotProtocol.keyAt(slot), table.geometry.keyStride());
        } else {
            persist(pool, SlotProtocol.keyAt(slot), table.geometry.keyStride());
        }
    }

    /** Whether slot {@code slot}, meta word and key, lies inside one unit the medium writes whole. */
    boolean keyRidesWithMeta(long slot) {
        long unit = table.file.persister().atomicWriteUnit();
        return slot / unit == (slot + table.geometry.slotSize() - 1) / unit;
    }

    private void persistMeta(Probe probe, MemorySegment pool, long slot) {
        if (probe.phases != null) {
            probe.phases.metas().add(slot, SlotMeta.BYTES);
        } else if (!table.persistOnSyncOnly) {
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
            table.gate.retire(p, block);
        }
    }

    // ------------------------------------------------------------------ single-key operations

    /** Copies the value of {@code key} into {@code out}; returns FOUND or NOT_FOUND ({@link #lastReadLength} its length). */
    int get(MemorySegment key, long keyOffset, MemorySegment out, long outOffset) {
        Probe probe = probes.get();
        probe.hash(key, keyOffset);
        EpochGate.Participant p = table.gate.enter();
        try {
            return reader.read(table.file.segment(), table.layout(), probe, key, keyOffset, out, outOffset);
        } finally {
            table.gate.exit(p);
        }
    }

    /** {@return the length of the value this thread's last get or read-modify-write copied out} */
    int lastReadLength() {
        return probes.get().readLength;
    }

    /** Inserts if absent the value of {@code valueLength} bytes: INSERTED or EXISTS. */
    int insert(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, int valueLength) {
        return write(Kind.INSERT, key, keyOffset, value, valueOffset, valueLength, null, 0, 0);
    }

    /** Inserts or replaces with the value of {@code valueLength} bytes: INSERTED or UPDATED. */
    int upsert(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, int valueLength) {
        return write(Kind.UPSERT, key, keyOffset, value, valueOffset, valueLength, null, 0, 0);
    }

    /** Replaces if present with the value of {@code valueLength} bytes: UPDATED or NOT_FOUND. */
    int update(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, int valueLength) {
        return write(Kind.UPDATE, key, keyOffset, value, valueOffset, valueLength, null, 0, 0);
    }

    /** Removes: DELETED or NOT_FOUND. */
    int delete(MemorySegment key, long keyOffset) {
        return write(Kind.DELETE, key, keyOffset, null, 0, 0, null, 0, 0);
    }

    /**
     * Touches the candidate buckets of keys {@code [from, to)} of a batch ({@link Probe#touch}) so
     * that the operations that follow find them in cache; inside the epoch, so that the mapping it
     * reads cannot be replaced meanwhile.
     */
    void touch(MemorySegment keys, int from, int to, long keySize) {
        Probe probe = probes.get();
        EpochGate.Participant p = table.gate.enter();
        try {
            MemorySegment pool = table.file.segment();
            TableLayout layout = layout();
            for (int i = from; i < to; i++) {
                probe.touch(pool, layout, keys, i * keySize);
            }
        } finally {
            table.gate.exit(p);
        }
    }

    /**
     * Replaces the value with {@code value} only if it is {@code expected}: UPDATED, EXISTS (another
     * value) or NOT_FOUND. The compare reads the block the item points at, and the swap is one CAS of
     * the meta word from that very block: a block is never rewritten while an item points at it, so
     * the swap succeeds exactly when the value compared is still the current one (else it retries).
     */
    int compareAndSet(MemorySegment key, long keyOffset, MemorySegment expected, long expectedOffset, int expectedLength,
                      MemorySegment value, long valueOffset, int valueLength) {
        return write(Kind.COMPARE_AND_SET, key, keyOffset, value, valueOffset, valueLength, expected, expectedOffset,
                expectedLength);
    }

    /** Removes only if the value is the {@code expectedLength} bytes {@code expected}: DELETED, EXISTS (another value) or NOT_FOUND. */
    int compareAndDelete(MemorySegment key, long keyOffset, MemorySegment expected, long expectedOffset, int expectedLength) {
        return write(Kind.COMPARE_AND_DELETE, key, keyOffset, null, 0, 0, expected, expectedOffset, expectedLength);
    }

    /**
     * Copies the value of {@code key} into {@code out} and replaces it with {@code value}: REPLACED
     * or NOT_FOUND. The copy is taken from the block the CAS swaps out, so it is exactly the value
     * replaced (the block cannot be reused before this operation leaves its epoch).
     */
    int readModifyWrite(MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, int valueLength,
                        MemorySegment out, long outOffset) {
        return write(Kind.READ_MODIFY_WRITE, key, keyOffset, value, valueOffset, valueLength, out, outOffset, 0);
    }

    /**
     * One operation of a batch's {@code kind}, the one dispatch of the CPU engine's batches and of
     * {@link CpuOperations}: {@code third} is the expected value of a conditional write, or where a
     * read-modify-write puts the value it replaced (a get's value goes there too), else unused. Values
     * written and compared have the pool's value size (a batch's columns); one read has
     * {@link #lastReadLength}.
     */
    int run(OpKind kind, MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, MemorySegment third,
            long thirdOffset) {
        int v = table.geometry.valueSize();
        return run(kind, key, keyOffset, value, valueOffset, v, third, thirdOffset, v);
    }

    /** {@link #run}, the value of {@code valueLength} bytes and the expected one of {@code expectedLength}. */
    int run(OpKind kind, MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, int v, MemorySegment third,
            long thirdOffset, int expectedLength) {
        return switch (kind) {
            case GET -> get(key, keyOffset, third, thirdOffset);
            case PUT -> upsert(key, keyOffset, value, valueOffset, v);
            case INSERT -> insert(key, keyOffset, value, valueOffset, v);
            case UPDATE -> update(key, keyOffset, value, valueOffset, v);
            case DELETE -> delete(key, keyOffset);
            case READ_MODIFY_WRITE -> readModifyWrite(key, keyOffset, value, valueOffset, v, third, thirdOffset);
            case COMPARE_AND_SET -> compareAndSet(key, keyOffset, third, thirdOffset, expectedLength, value, valueOffset, v);
            case COMPARE_AND_DELETE -> compareAndDelete(key, keyOffset, third, thirdOffset, expectedLength);
        };
    }

    enum Kind { INSERT, UPSERT, UPDATE, DELETE, READ_MODIFY_WRITE, COMPARE_AND_SET, COMPARE_AND_DELETE }

    private int write(Kind kind, MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, int valueLength,
                      MemorySegment out, long outOffset, int expectedLength) {
        Probe probe = probes.get();
        probe.hash(key, keyOffset);
        probe.pendingBlock = -1;
        probe.valueLength = valueLength;
        probe.expectedLength = expectedLength;
        try {
            for (;;) {
                TableLayout observedLayout;
                long observedBlocks;
                int r;
                EpochGate.Participant p = table.gate.enter();
                try {
                    MemorySegment pool = table.file.segment();
                    observedLayout = table.layout();
                    observedBlocks = table.blocks.totalBlocks();
                    r = switch (kind) {
                        case INSERT -> attemptInsert(pool, observedLayout, p, probe, key, keyOffset, value, valueOffset, false);
                        case UPSERT -> attemptInsert(pool, observedLayout, p, probe, key, keyOffset, value, valueOffset, true);
                        case UPDATE -> attemptUpdate(pool, observedLayout, p, probe, key, keyOffset, value, valueOffset, null, 0);
                        case READ_MODIFY_WRITE -> attemptUpdate(pool, observedLayout, p, probe, key, keyOffset, value, valueOffset,
                                out, outOffset);
                        case DELETE -> attemptDelete(pool, observedLayout, p, probe, key, keyOffset);
                        // For the conditional writes, out carries the expected value.
                        case COMPARE_AND_SET, COMPARE_AND_DELETE -> attemptConditional(pool, observedLayout, p, probe, key,
                                keyOffset, kind == Kind.COMPARE_AND_SET ? value : null, valueOffset, out, outOffset);
                    };
                } finally {
                    table.gate.exit(p);
                }
                if ((r == OpStatus.NEED_RESIZE || r == OpStatus.NEED_HEAP) && !grows) {
                    return r;  // the finally below frees a block staged for it: nothing was changed
                }
                if (r == OpStatus.NEED_RESIZE) {
                    resize(observedLayout);
                } else if (r == OpStatus.NEED_HEAP) {
                    growHeap(observedBlocks, probe.heapShortClass, probe.heapShortForNewItem ? BlockHeap.UPDATE_RESERVE : 0);
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

    /** A block that was written but never published has no readers: it can be freed at once. */
    private void releasePending(Probe probe) {
        EpochGate.Participant p = table.gate.enter();
        try {
            table.revokeChecksum(probe.pendingBlock);
            table.blocks.free(probe.pendingBlock);
            probe.pendingBlock = -1;
        } finally {
            table.gate.exit(p);
        }
    }

    /**
     * Writes the caller's value into a block of its own (once per operation) and persists it. A new
     * item leaves {@link BlockHeap#UPDATE_RESERVE} blocks for updates.
     */
    boolean stageValue(MemorySegment pool, Probe probe, MemorySegment key, long keyOffset, MemorySegment value,
                               long valueOffset, CrashPoint point) {
        if (probe.pendingBlock >= 0) {
            return true;
        }
        boolean newItem = point == CrashPoint.INSERT_VALUE_PERSISTED;
        int valueClass = table.values.classOf(probe.valueLength);
        long block = table.blocks.allocate(valueClass, newItem ? BlockHeap.UPDATE_RESERVE : 0);
        probe.heapShortForNewItem = newItem;
        probe.heapShortClass = valueClass;
        if (block < 0) {
            return false;
        }
        probe.pendingClass = valueClass;
        int written = table.values.write(pool, block, value, valueOffset, probe.valueLength);
        if (probe.checksum != null) {
            // With the value, before anything publishes it: a published item's checksum always matches.
            probe.checksum.store(pool, block, probe.checksum.of(key, keyOffset, value, valueOffset, probe.valueLength));
            written += probe.checksum.extraBytes();
        }
        persistValue(pool, block, written);
        probe.pendingBlock = block;
        table.hook.reached(point);
        return true;
    }

    /**
     * Inserts (and puts) of keys that share a stripe run one at a time, from the probe that finds the
     * key absent to the re-probe after publishing. Without it two inserts of one absent key could both
     * return true: the first publishes and finds no rival, the second publishes in a more valid slot,
     * finds the first and removes it (GPHash §3.2.2 keeps the more valid copy), and the first's "true"
     * is undone, which gave {@code putIfAbsent} two winners (InsertRaceTest). Lock-free slot words
     * cannot tell the second inserter whether the first has already returned; a stripe makes the
     * second one find the first's item published. Gets, updates and deletes take no stripe; inserts
     * of different keys meet only when their hashes share one of {@link #INSERT_STRIPES}.
     */
    private final ReentrantLock[] insertStripes = stripes();

    /** Stripes of {@link #insertStripes}: a power of two, many times the threads a machine runs. */
    static final int INSERT_STRIPES = 1024;

    private static ReentrantLock[] stripes() {
        ReentrantLock[] s = new ReentrantLock[INSERT_STRIPES];
        for (int i = 0; i < s.length; i++) {
            s[i] = new ReentrantLock();
        }
        return s;
    }

    /** An insert (or a put) of the probed key under its stripe: see {@link #insertStripes}. */
    int attemptInsert(MemorySegment pool, TableLayout t, EpochGate.Participant p, Probe probe,
                      MemorySegment key, long keyOffset, MemorySegment value, long valueOffset, boolean upsert) {
        // High bits of the first hash: the buckets use its low bits.
        ReentrantLock stripe = insertStripes[(int) (probe.hashes[0] >>> 40) & (INSERT_STRIPES - 1)];
        stripe.lock();
        try {
            return attemptInsertAlone(pool, t, p, probe, key, keyOffset, value, valueOffset, upsert);
        } finally {
            stripe.unlock();
        }
    }

    private int attemptInsertAlone(MemorySegment pool, TableLayout t, EpochGate.Participant p, Probe probe,
                                   MemorySegment key, long keyOffset, MemorySegment value, long valueOffset,
                                   boolean upsert) {
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
            if (!SlotProtocol.claim(pool, slot)) {
                return OpStatus.RETRY;
            }
            table.hook.reached(CrashPoint.INSERT_SLOT_CLAIMED);
            SlotProtocol.writeKey(pool, slot, key, keyOffset, table.geometry.keySize());
            persistKey(probe, pool, slot);
            table.hook.reached(CrashPoint.INSERT_ITEM_PERSISTED);
        }
        probe.claimedSlot = -1;
        SlotProtocol.publish(pool, slot, table.meta.make(probe.fingerprint, probe.pendingClass, probe.pendingBlock));
        probe.pendingBlock = -1;
        table.hook.reached(CrashPoint.INSERT_PUBLISHED);
        persistMeta(probe, pool, slot);
        table.hook.reached(CrashPoint.INSERT_PERSISTED);
        table.size.increment();

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
        long previous = reader.validItemBlock(pool, probe, key, keyOffset);
        probe.readLength = table.values.read(pool, previous, table.meta.valueClass(probe.matchMeta[0]), previousOut,
                previousOutOffset);
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
        reader.checkBlockOf(slot, old);  // it is retired below: never free what is no block
        long word = table.meta.make(SlotMeta.fingerprint(old), probe.pendingClass, probe.pendingBlock);
        if (!SlotProtocol.swapValue(pool, slot, old, word)) {
            return OpStatus.RETRY;
        }
        probe.pendingBlock = -1;
        table.hook.reached(CrashPoint.UPDATE_SWAPPED);
        persistMeta(probe, pool, slot);
        table.hook.reached(CrashPoint.UPDATE_PERSISTED);
        if (!probe.valueSharedWithOtherMatch(0)) {
            retire(p, probe, table.meta.valueOffset(old));
        }
        removeDuplicates(pool, p, probe, 1);
        return OpStatus.UPDATED;
    }

    /**
     * A conditional write: if the valid item's value equals {@code expected}, swaps in {@code value}
     * (or, with none, deletes); EXISTS when it differs.
     */
    int attemptConditional(MemorySegment pool, TableLayout t, EpochGate.Participant p, Probe probe,
                                   MemorySegment key, long keyOffset, MemorySegment value, long valueOffset,
                                   MemorySegment expected, long expectedOffset) {
        probe.scan(pool, t, key, keyOffset);  // all matches: the write removes duplicates and keeps shared blocks
        long block = reader.validItemBlock(pool, probe, key, keyOffset);
        if (block < 0) {
            return OpStatus.NOT_FOUND;
        }
        int valueClass = table.meta.valueClass(probe.matchMeta[0]);
        int size = table.values.length(pool, block, valueClass);
        long at = table.values.valueAt(block, valueClass);
        if (size != probe.expectedLength
                || MemorySegment.mismatch(pool, at, at + size, expected, expectedOffset, expectedOffset + size) != -1) {
            return OpStatus.EXISTS;
        }
        if (value != null) {
            return swapValue(pool, p, probe, key, keyOffset, value, valueOffset);
        }
        return unlinkValidItem(pool, p, probe);
    }

    int attemptDelete(MemorySegment pool, TableLayout t, EpochGate.Participant p, Probe probe,
                              MemorySegment key, long keyOffset) {
        probe.scan(pool, t, key, keyOffset);
        if (probe.matchCount == 0) {
            return OpStatus.NOT_FOUND;
        }
        return unlinkValidItem(pool, p, probe);
    }

    /** Deletes the valid item the last probe found (one CAS to EMPTY): DELETED, or RETRY if it changed. */
    private int unlinkValidItem(MemorySegment pool, EpochGate.Participant p, Probe probe) {
        long slot = probe.matchSlot[0];
        long old = probe.matchMeta[0];
        reader.checkBlockOf(slot, old);
        if (!SlotProtocol.unlink(pool, slot, old)) {
            return OpStatus.RETRY;
        }
        table.hook.reached(CrashPoint.DELETE_CLEARED);
        persistMeta(probe, pool, slot);
        table.hook.reached(CrashPoint.DELETE_PERSISTED);
        table.size.decrement();
        if (!probe.valueSharedWithOtherMatch(0)) {
            retire(p, probe, table.meta.valueOffset(old));
        }
        removeDuplicates(pool, p, probe, 1);
        return OpStatus.DELETED;
    }

    /** Clears matches {@code from..} of the last probe: copies of the key that are not the valid item. */
    private void removeDuplicates(MemorySegment pool, EpochGate.Participant p, Probe probe, int from) {
        for (int i = from; i < probe.matchCount; i++) {
            long slot = probe.matchSlot[i];
            long meta = probe.matchMeta[i];
            reader.checkBlockOf(slot, meta);
            if (SlotProtocol.unlink(pool, slot, meta)) {
                persistMeta(probe, pool, slot);
                table.hook.reached(CrashPoint.DUPLICATE_REMOVED);
                table.size.decrement();
                if (!probe.valueSharedWithOtherMatch(i)) {
                    retire(p, probe, table.meta.valueOffset(meta));
                }
            }
        }
    }
}
