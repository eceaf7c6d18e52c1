package org.gphash.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Geometry;
import org.gphash.error.PoolFormatException.Reason;
import org.gphash.error.PoolFormatException;
import org.gphash.format.HeaderStore;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.gphash.persistence.PoolFile;

/**
 * Chooses between two valid header copies that disagree on what no commit changes (issue 27: a copy
 * with one bit of a hash seed changed and its checksum made to match was taken as the newer, written
 * over the intact copy, and every key became unreachable). The table decides: a copy is confirmed
 * when the items found under its geometry carry the fingerprints their keys hash to under its seeds.
 * Reads only; open then commits the confirmed copy to both places.
 */
final class HeaderChoice {

    /** Items sampled per copy: under wrong seeds a fingerprint matches by chance once in 2^16 or more. */
    private static final int SAMPLE = 64;

    private HeaderChoice() {
    }

    /**
     * The read result with its header confirmed by the table.
     *
     * @throws PoolFormatException when the table's items confirm neither copy
     */
    static HeaderStore.ReadResult confirm(PoolFile file, HeaderStore.ReadResult read) {
        PoolHeader rival = read.rival();
        if (rival == null) {
            return read;
        }
        MemorySegment pool = file.segment();
        int[] mine = sample(pool, read.header());
        int[] theirs = sample(pool, rival);
        boolean mineConfirmed = confirmed(mine);
        boolean theirsConfirmed = confirmed(theirs);
        if (mineConfirmed || mine[0] == 0 && theirs[0] == 0) {
            return read.choose(read.header());  // the newer copy, or an empty table where the seeds decide nothing
        }
        if (theirsConfirmed) {
            return read.choose(rival);
        }
        throw new PoolFormatException(Reason.CORRUPT, file.path(), "the two header copies disagree on the pool's "
                + "geometry or hash seeds, which no crash changes, and the table's items match neither ("
                + mine[1] + " of " + mine[0] + " sampled items match copy sequence " + read.header().sequence() + ", "
                + theirs[1] + " of " + theirs[0] + " match copy sequence " + rival.sequence()
                + "); nothing was changed: `gphash check` shows both copies");
    }

    private static boolean confirmed(int[] s) {
        return s[0] > 0 && s[1] * 2 > s[0];
    }

    /** {items sampled, items whose fingerprint matches their key} under {@code h}'s geometry and seeds. */
    private static int[] sample(MemorySegment pool, PoolHeader h) {
        Geometry g = h.geometry();
        Probe probe = new Probe(g, h.seeds());
        long[] levels = h.levelOffsets();
        int sampled = 0;
        int matched = 0;
        for (int i = levels.length - 1; i >= 0 && sampled < SAMPLE; i--) {
            long slots = h.bucketsInLevel(i) * g.slotsPerBucket();
            for (long s = 0; s < slots && sampled < SAMPLE; s++) {
                long slot = levels[i] + s * g.slotSize();
                if (slot + g.slotSize() > pool.byteSize()) {
                    break;
                }
                long meta = pool.get(ValueLayout.JAVA_LONG_UNALIGNED, slot);
                if (!SlotMeta.isItem(meta)) {
                    continue;
                }
                sampled++;
                probe.hash(pool, slot + SlotMeta.BYTES);
                if (probe.fingerprint == SlotMeta.fingerprint(meta)) {
                    matched++;
                }
            }
        }
        return new int[] {sampled, matched};
    }
}
