package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

import org.gphash.Geometry;
import org.gphash.format.SlotMeta;
import org.gphash.format.SlotMetaV3;

/**
 * Read-only consistency check of a live table, run with operations drained: every slot state, the
 * fingerprint of every item, duplicates, value offsets and free-space accounting. Changes nothing.
 */
final class PoolVerifier {

    private PoolVerifier() {
    }

    static VerifyReport verify(Table table) {
        MemorySegment pool = table.file.segment();
        Geometry g = table.geometry;
        TableLayout t = table.layout();
        Probe probe = table.newProbe();
        long items = 0;
        long insert = 0;
        long torn = 0;
        long dups = 0;
        long bad = 0;
        long shared = 0;
        Map<Long, Boolean> seenSparse = new HashMap<>();
        BitSet seen = new BitSet();
        for (int d = 0; d < t.levelCount(); d++) {
            long slots = t.bucketsAtDepth(d) * g.slotsPerBucket();
            for (long i = 0; i < slots; i++) {
                long slot = t.levelOffset(d) + i * g.slotSize();
                long meta = Slots.getMeta(pool, slot);
                if (meta == SlotMeta.EMPTY) {
                    continue;
                }
                if (!SlotMeta.isItem(meta)) {
                    insert++;
                    continue;
                }
                items++;
                long keyAt = slot + SlotMeta.BYTES;
                probe.hash(pool, keyAt);
                if (probe.fingerprint != SlotMeta.fingerprint(meta)) {
                    torn++;
                    continue;
                }
                probe.scan(pool, t, pool, keyAt);
                if (probe.matchCount == 0 || probe.matchSlot[0] != slot) {
                    dups++;
                }
                long offset = table.meta.valueOffset(meta);
                if (!table.blocks.isBlock(offset, table.meta.valueClass(meta))) {
                    bad++;
                    continue;
                }
                long key = offset / (table.heap != null ? g.valueStride() : SlotMetaV3.OFFSET_UNIT);
                boolean fresh = key < Integer.MAX_VALUE ? !seen.get((int) key) : seenSparse.putIfAbsent(key, true) == null;
                if (key < Integer.MAX_VALUE) {
                    seen.set((int) key);
                }
                if (!fresh) {
                    shared++;
                }
            }
        }
        long used = table.blocks.usedBlocks() - table.gate.pendingReclamation();
        return new VerifyReport(items, insert, torn, dups, bad, shared, used - items, 0);  // the pool alone: no mirror
    }
}
