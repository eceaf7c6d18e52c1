package org.gphash.recovery;

import java.nio.file.Path;
import java.util.List;

import org.gphash.format.PoolHeader;
import org.gphash.table.PoolInspector;

/**
 * Everything one read-only scan of a pool found: what {@code check} judges and {@code stats}
 * prints. {@code header} is null when the header itself could not be used.
 */
public record PoolReport(Path path, long fileBytes, PoolHeader header, PoolInspector.HeaderCopy[] copies,
                         Findings findings, List<LevelStats> levels, long items, long valueBlocks,
                         long valueBlocksUsed, int valueStride) {

    public boolean sound() {
        return findings.sound();
    }

    /**
     * Whether the damage is more than a crash explains, so that open refuses the pool and only
     * {@code recover --force} repairs it: items that do not match their key or bucket, or more
     * half-done operations than the header admits were in flight.
     */
    public boolean beyondCrash() {
        if (header == null) {
            return false;
        }
        long halfDone = findings.count(Problem.INSERT_SLOT) + findings.count(Problem.DUPLICATE_KEY);
        return findings.count(Problem.TORN_FINGERPRINT) + findings.count(Problem.MISPLACED_ITEM)
                + findings.count(Problem.CLOSE_RECORD_MISMATCH) > 0
                || halfDone > header.crashAllowance();
    }

    /** {@return whether the file cannot be checked at all (not a pool) or open refuses it before reading it} */
    public boolean cannotOpen() {
        return findings.count(Problem.NOT_A_POOL) + findings.count(Problem.OPEN_REFUSES) > 0;
    }

    /** {@return whether open refuses the pool for corruption that no repair of slots fixes} */
    public boolean structurallyCorrupt() {
        return header == null || findings.count(Problem.BAD_VALUE_OFFSET) + findings.count(Problem.SHARED_VALUE_BLOCK)
                + findings.count(Problem.EXTENTS_OVERLAP) > 0;
    }

    public long slots() {
        return levels.stream().mapToLong(LevelStats::slots).sum();
    }

    public double loadFactor() {
        long s = slots();
        return s == 0 ? 0 : (double) items / s;
    }

    /** {@return buckets of all levels by number of items, {@code [n]} = buckets holding n} */
    public long[] histogram() {
        if (levels.isEmpty()) {
            return new long[0];
        }
        long[] out = new long[levels.get(0).histogram().length];
        for (LevelStats l : levels) {
            for (int i = 0; i < out.length; i++) {
                out[i] += l.histogram()[i];
            }
        }
        return out;
    }
}
