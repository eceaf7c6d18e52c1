package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongPredicate;

import org.gphash.EntryChunk;
import org.gphash.Geometry;
import org.gphash.ItemChecksumException;
import org.gphash.format.ItemChecksum;
import org.gphash.format.MetaFormat;
import org.gphash.format.SlotMeta;
import org.gphash.format.ValueFormat;
import org.gphash.spi.ScanState;

/**
 * Reads a pool's live entries, chunk by chunk: the valid item of every key (duplicates of a racing
 * insert are skipped). Used by the engines' cursors, whose callers hold no lock between chunks, and
 * by the offline {@code dump}.
 *
 * <p>Levels are scanned bottom level first. Between chunks the table may change: an item can only
 * move up (a resize copies bottom-level items into the levels above and drops the bottom level, or
 * adds a new top level), so a level dropped part-way leaves its remaining items in levels still to
 * come, and a new top level is added to the end of the scan. Hence the cursor is weakly consistent
 * like {@code ConcurrentHashMap}'s iterators: every key present for the whole scan is returned, at
 * least once (a key moved up by a resize after it was returned may be returned again); a key
 * written or deleted during the scan may or may not be.
 */
public final class EntryScan {

    /** Where a scan is: the levels (by offset) still to read, bottom first, and the next slot. */
    public static final class State implements ScanState {

        /** {@code state} as a scan of a pool; a state made by some other engine is refused. */
        public static State of(ScanState state) {
            if (state instanceof State s) {
                return s;
            }
            throw new IllegalArgumentException("a scan state of another engine: " + state);
        }

        private final List<Long> levels = new ArrayList<>();
        private final Set<Long> seen = new HashSet<>();
        private long nextSlot;
        private boolean started;
        private long skipped;
        private long torn;
        private long badValues;
        private long checksumFailures;

        /** Whether every level has been read. */
        @Override
        public boolean done() {
            return started && levels.isEmpty();
        }

        /**
         * Slots holding something other than a key's valid item that a crash leaves (INSERT, a
         * duplicate of a racing insert) passed over.
         */
        public long skipped() {
            return skipped;
        }

        /** Items passed over because their fingerprint does not match their key (no crash leaves one). */
        public long torn() {
            return torn;
        }

        /** Items passed over because the scan's {@code isValueBlock} rejected their value offset. */
        public long badValues() {
            return badValues;
        }

        /** Items passed over because they fail their checksum (only where the scan was asked to skip them). */
        public long checksumFailures() {
            return checksumFailures;
        }

        /** Adds the levels of {@code t} not seen before (new top levels go last), drops the ones gone. */
        void sync(TableLayout t) {
            for (int d = t.levelCount() - 1; d >= 0; d--) {
                long offset = t.levelOffset(d);
                if (seen.add(offset)) {
                    levels.add(offset);
                }
            }
            while (!levels.isEmpty() && depthOf(t, levels.get(0)) < 0) {
                levels.remove(0);
                nextSlot = 0;
            }
            levels.removeIf(o -> depthOf(t, o) < 0);
            started = true;
        }
    }

    private EntryScan() {
    }

    private static int depthOf(TableLayout t, long offset) {
        for (int d = 0; d < t.levelCount(); d++) {
            if (t.levelOffset(d) == offset) {
                return d;
            }
        }
        return -1;
    }

    /**
     * Appends to {@code chunk} the valid items from where {@code state} stands, until the chunk is
     * full or the table is read. The caller keeps the table from changing meanwhile (an epoch, or the
     * GPU engine's lock). With item checksums, an item that fails its checksum throws
     * {@link ItemChecksumException}, or with {@code skipChecksumFailures} is counted and passed over.
     * {@code isValueBlock} (null: trust the pool, as a live engine does) passes over items whose value
     * offset is no block of the heap (a damaged pool read offline), and every scan those whose value's
     * frame is not whole ({@code values}: format 3's header; format 2 has none).
     */
    static void fill(MemorySegment pool, TableLayout t, Geometry g, MetaFormat format, ValueFormat values, Probe probe,
                     State state, EntryChunk chunk, boolean skipChecksumFailures, LongPredicate isValueBlock, Path path) {
        state.sync(t);
        int slotSize = g.slotSize();
        while (!chunk.full() && !state.levels.isEmpty()) {
            long level = state.levels.get(0);
            long slots = t.bucketsAtDepth(depthOf(t, level)) * g.slotsPerBucket();
            while (state.nextSlot < slots && !chunk.full()) {
                long slot = level + state.nextSlot * slotSize;
                state.nextSlot++;
                long meta = Slots.getMeta(pool, slot);
                if (meta == SlotMeta.EMPTY) {
                    continue;
                }
                long keyAt = slot + SlotMeta.BYTES;
                if (!SlotMeta.isItem(meta)) {
                    state.skipped++;
                    continue;
                }
                probe.hash(pool, keyAt);
                if (probe.fingerprint != SlotMeta.fingerprint(meta)) {
                    state.torn++;
                    continue;
                }
                probe.scan(pool, t, pool, keyAt);
                if (probe.matchCount == 0 || probe.matchSlot[0] != slot) {
                    state.skipped++;
                    continue;
                }
                long block = format.valueOffset(probe.matchMeta[0]);
                int valueClass = format.valueClass(probe.matchMeta[0]);
                if (isValueBlock != null && !isValueBlock.test(block) || !values.frameWhole(pool, block, valueClass)) {
                    state.badValues++;
                    continue;
                }
                long valueAt = values.valueAt(block, valueClass);
                ItemChecksum c = probe.checksum;
                if (c != null && c.stored(pool, block) != c.ofStored(pool, keyAt, pool, block)) {
                    if (!skipChecksumFailures) {
                        throw new ItemChecksumException("pool " + path + ": the item in slot " + slot + " (value block at "
                                + valueAt + ") fails its checksum; `gphash check --deep` lists every such item");
                    }
                    state.checksumFailures++;
                    continue;
                }
                chunk.add(pool, keyAt, valueAt, values.length(pool, block, valueClass));
            }
            if (state.nextSlot >= slots) {
                state.levels.remove(0);
                state.nextSlot = 0;
            }
        }
    }
}
