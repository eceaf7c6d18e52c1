package org.gphash.bench;

import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.GPHashIndex;
import org.gphash.IndexStats;

/**
 * The load factor a geometry reaches before its first resize (the GPHash paper's §4.2 figure):
 * creates a pool whose top level has 2^topLog2 buckets, inserts fresh keys until an insert finds no
 * free candidate slot and resizes, and prints the share of slots that were full just before.
 *
 * <pre>./gphash run org.gphash.bench.LoadFactor [topLog2=20] [levels=2] [hashes=2] [slots=8] [seed=1]</pre>
 */
public final class LoadFactor {

    private LoadFactor() {
    }

    public static void main(String[] args) throws Exception {
        int topLog2 = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int levels = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int hashes = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        int slots = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        long seed = args.length > 4 ? Long.parseLong(args[4]) : 1;
        long totalSlots = 0;
        for (int d = 0; d < levels; d++) {
            totalSlots += (1L << (topLog2 - d)) * slots;
        }
        Path dir = Files.createTempDirectory(Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(
                System.getProperty("java.io.tmpdir")), "gphash-lf-");
        Path pool = dir.resolve("lf.pool");
        byte[] value = new byte[8];
        long start = System.nanoTime();
        try (GPHashIndex index = GPHashIndex.builder(pool).valueSize(value.length).levels(levels).hashes(hashes)
                .slotsPerBucket(slots).initialCapacity((long) (totalSlots * 0.85)).seed(seed).create()) {
            IndexStats first = index.stats();
            if (first.capacity() != totalSlots) {
                throw new IllegalStateException("pool has " + first.capacity() + " slots, expected " + totalSlots);
            }
            long key = 0;
            // Insert until the first resize; a resize leaves the capacity changed.
            while (index.stats().resizes() == 0) {
                index.insert(key++, value);
            }
            long before = key - 1; // the last insert is the one that triggered the resize
            System.out.printf("levels=%d hashes=%d slots=%d top=2^%d: %d of %d slots full at the first resize: load factor %.4f (%.1f s)%n",
                    levels, hashes, slots, topLog2, before, totalSlots, (double) before / totalSlots,
                    (System.nanoTime() - start) / 1e9);
        } finally {
            Files.deleteIfExists(pool);
            Files.deleteIfExists(dir);
        }
    }
}
