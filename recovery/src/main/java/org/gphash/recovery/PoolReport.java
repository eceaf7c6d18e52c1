package org.gphash.recovery;

import java.nio.file.Path;
import java.util.List;

import org.gphash.index.PoolHeader;
import org.gphash.index.PoolInspector;

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

    public long slots() {
        return levels.stream().mapToLong(LevelStats::slots).sum();
    }

    public double loadFactor() {
        long s = slots();
        return s == 0 ? 0 : (double) items / s;
    }

    /** Buckets of all levels by number of items, {@code [n]} = buckets holding n. */
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
