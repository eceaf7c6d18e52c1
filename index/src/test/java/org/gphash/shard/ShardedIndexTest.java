package org.gphash.shard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Cursor;
import org.gphash.GPHashIndex;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.PoolConfigMismatchException;
import org.gphash.error.PoolExistsException;
import org.gphash.error.PoolFormatException;
import org.gphash.error.PoolIoException;
import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A sharded index on the CPU engine (issue 30): layout, batches across shards, reopen, recovery, refusals. */
class ShardedIndexTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    private static byte[] value(long key, long version) {
        byte[] v = new byte[32];
        for (int i = 0; i < 8; i++) {
            v[i] = (byte) (key >>> (8 * i));
            v[8 + i] = (byte) (version >>> (8 * i));
        }
        return v;
    }

    private GPHashIndex create(Path dir, int shards) {
        return GPHashIndex.builder(dir).keySize(8).valueSize(32).shards(shards).initialCapacity(1024).create();
    }

    @Test
    void createsADirectoryOfShardPoolsEachAWholePoolHoldingOnlyItsKeys() throws IOException {
        Path dir = pools.pool("idx");
        try (GPHashIndex index = create(dir, 3)) {
            for (long k = 0; k < 3000; k++) {
                index.put(k, value(k, 0));
            }
            assertEquals(3000, index.size());
            List<IndexStats> perShard = index.shardStats();
            assertEquals(3, perShard.size());
            long sum = 0;
            for (IndexStats s : perShard) {
                assertTrue(s.size() > 800 && s.size() < 1200, "balanced: " + s.size());
                sum += s.size();
            }
            assertEquals(3000, sum);
            assertTrue(index.stats().indexPlacement().startsWith("3 shards"), index.stats().indexPlacement());
            assertTrue(index.gpu().isEmpty(), "CPU shards offer no GPU features");
        }
        assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        assertTrue(Files.exists(dir.resolve(ShardManifest.FILE_NAME)));
        ShardManifest m = ShardManifest.read(dir);
        ShardFunction f = new ShardFunction(m.seed(), m.shards());
        // Each shard pool is a whole pool holding exactly its keys (read as the tools read it); the API
        // refuses to open one alone, where keys written would be unreachable from the index (issue 52).
        Set<Long> seen = new HashSet<>();
        for (int s = 0; s < 3; s++) {
            Path shardPool = ShardManifest.shardPath(dir, s);
            org.gphash.PoolConfigMismatchException alone = assertThrows(org.gphash.PoolConfigMismatchException.class,
                    () -> GPHashIndex.builder(shardPool).open());
            assertTrue(alone.getMessage().contains("open that directory"), alone.getMessage());
            assertEquals(0, ShardedIndexes.misplacedItems(dir, m, s));
            try (org.gphash.table.PoolInspector in = org.gphash.table.PoolInspector.open(shardPool)) {
                org.gphash.table.TableLayout t = in.layout();
                int slotSize = in.geometry().slotSize();
                for (int d = 0; d < t.levelCount(); d++) {
                    for (long i = 0; i < t.bucketsAtDepth(d) * in.geometry().slotsPerBucket(); i++) {
                        long slot = t.levelOffset(d) + i * slotSize;
                        if (org.gphash.format.SlotMeta.isItem(in.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, slot))) {
                            long k = in.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, slot + 8);
                            assertEquals(s, f.shardOf(in.segment(), slot + 8, 8), "key " + k + " is in shard " + s);
                            assertTrue(seen.add(k));
                        }
                    }
                }
            }
        }
        assertEquals(3000, seen.size());
    }

    /**
     * Large batches split across four shards, run in parallel, against a model; on format 3 pools
     * (issue 53) with values of 0 to 32 bytes, which every shard keeps at its length, batches and
     * single calls alike, through a reopen.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "format {0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {2, 3})
    void largeBatchesSplitInParallelMatchAModelInTheCallersOrder(int format) {
        Path dir = pools.pool("idx");
        SplittableRandom r = new SplittableRandom(30);
        Map<Long, byte[]> model = new HashMap<>();
        long version = 0;
        try (GPHashIndex index = GPHashIndex.builder(dir).keySize(8).valueSize(32).shards(4).initialCapacity(1024)
                .poolFormat(format).create()) {
            assertEquals(format == 3, index.valueLengths(), "a sharded index passes its shards' lengths through");
            for (int round = 0; round < 4; round++) {
                int n = ShardedEngine.RANGE_MIN * 5 + r.nextInt(1000);  // five ranges split at once
                Batch batch = index.newBatch(n);
                long[] keys = new long[n];
                OpKind[] kinds = new OpKind[n];
                byte[][] values = new byte[n][];
                for (int i = 0; i < n; i++) {
                    long k = r.nextInt(5000);  // repeated keys within the batch
                    OpKind kind = switch (r.nextInt(5)) {
                        case 0 -> OpKind.GET;
                        case 1 -> OpKind.PUT;
                        case 2 -> OpKind.INSERT;
                        case 3 -> OpKind.UPDATE;
                        default -> OpKind.DELETE;
                    };
                    byte[] v = value(k, ++version);
                    if (format == 3) {
                        v = java.util.Arrays.copyOf(v, r.nextInt(33));
                    }
                    keys[i] = k;
                    kinds[i] = kind;
                    values[i] = v;
                    batch.add(kind, longKey(k), kind.hasValue() ? v : null);
                }
                BatchResult result = index.execute(batch);
                for (int i = 0; i < n; i++) {
                    byte[] before = model.get(keys[i]);
                    Outcome expected;
                    switch (kinds[i]) {
                        case GET -> expected = before != null ? Outcome.FOUND : Outcome.NOT_FOUND;
                        case PUT -> {
                            expected = before != null ? Outcome.UPDATED : Outcome.INSERTED;
                            model.put(keys[i], values[i]);
                        }
                        case INSERT -> {
                            expected = before != null ? Outcome.EXISTS : Outcome.INSERTED;
                            model.putIfAbsent(keys[i], values[i]);
                        }
                        case UPDATE -> {
                            expected = before != null ? Outcome.UPDATED : Outcome.NOT_FOUND;
                            if (before != null) {
                                model.put(keys[i], values[i]);
                            }
                        }
                        default -> {
                            expected = before != null ? Outcome.DELETED : Outcome.NOT_FOUND;
                            model.remove(keys[i]);
                        }
                    }
                    assertEquals(expected, result.outcome(i), "round " + round + " op " + i + " " + kinds[i] + " " + keys[i]);
                    if (kinds[i] == OpKind.GET && before != null) {
                        assertArrayEquals(before, result.value(i), "op " + i);
                    }
                }
            }
            assertEquals(model.size(), index.size());
            if (format == 3) {
                // Single calls go to their key's shard, each value at its length.
                index.put(7_000_001L, new byte[] {9, 8, 7});
                model.put(7_000_001L, new byte[] {9, 8, 7});
                assertTrue(index.compareAndSet(7_000_001L, new byte[] {9, 8, 7}, new byte[5]));
                model.put(7_000_001L, new byte[5]);
                assertArrayEquals(new byte[5], index.get(7_000_001L));
            }
        }
        try (GPHashIndex index = GPHashIndex.builder(dir).open()) {
            for (Map.Entry<Long, byte[]> e : model.entrySet()) {
                assertArrayEquals(e.getValue(), index.get(e.getKey()));
            }
            assertEquals(model.size(), index.size());
        }
    }

    private static byte[] longKey(long k) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (k >>> (8 * i));
        }
        return b;
    }

    @Test
    void cursorSnapshotAndRecoveryCoverEveryShard() {
        Path dir = pools.pool("idx");
        Path copy = pools.pool("copy");
        GPHashIndex index = create(dir, 2);
        for (long k = 0; k < 500; k++) {
            index.put(k, value(k, 1));
        }
        Set<Long> keys = new HashSet<>();
        try (Cursor c = index.cursor()) {
            while (c.next()) {
                assertTrue(keys.add(c.longKey()));
            }
        }
        assertEquals(500, keys.size());
        index.snapshot(copy);
        index.put(1000L, value(1000, 1));
        index.engine().abandon();  // a crash: no clean shutdown on any shard
        try (GPHashIndex reopened = GPHashIndex.builder(dir).open()) {
            assertFalse(reopened.lastRecovery().previousShutdownClean());
            assertEquals(501, reopened.lastRecovery().items());
            assertEquals(501, reopened.size());
            assertArrayEquals(value(1000, 1), reopened.get(1000L));
        }
        try (GPHashIndex snap = GPHashIndex.builder(copy).open()) {
            assertEquals(500, snap.size());
            assertNull(snap.get(1000L));
            assertArrayEquals(value(7, 1), snap.get(7L));
        }
    }

    @Test
    void createRefusesAnExistingPathAndOpenWithAnotherShardCountOrKeySize() {
        Path dir = pools.pool("idx");
        create(dir, 2).close();
        assertThrows(PoolExistsException.class, () -> create(dir, 2));
        PoolConfigMismatchException count = assertThrows(PoolConfigMismatchException.class,
                () -> GPHashIndex.builder(dir).shards(3).open());
        assertTrue(count.getMessage().contains("has 2 shards"), count.getMessage());
        PoolConfigMismatchException key = assertThrows(PoolConfigMismatchException.class,
                () -> GPHashIndex.builder(dir).keySize(16).open());
        assertTrue(key.getMessage().contains("keySize 8"), key.getMessage());
    }

    @Test
    void openRefusesAMissingShardAForeignPoolAndADamagedManifestWritingNothing() throws IOException {
        Path dir = pools.pool("idx");
        Path other = pools.pool("other");
        create(dir, 3).close();
        create(other, 3).close();
        Path shard1 = ShardManifest.shardPath(dir, 1);
        byte[] shard1Bytes = Files.readAllBytes(shard1);

        // A pool of another index put in shard 1's place.
        Files.move(shard1, pools.pool("saved.pool"));
        Files.copy(ShardManifest.shardPath(other, 1), shard1);
        byte[][] before = contents(dir);
        PoolFormatException foreign = assertThrows(PoolFormatException.class, () -> GPHashIndex.builder(dir).open());
        assertEquals(PoolFormatException.Reason.FOREIGN_HEADER, foreign.reason());
        assertTrue(foreign.getMessage().contains("shard 1"), foreign.getMessage());
        assertContentsUnchanged(before, contents(dir));

        // Shard 1 missing.
        Files.delete(shard1);
        PoolIoException missing = assertThrows(PoolIoException.class, () -> GPHashIndex.builder(dir).open());
        assertTrue(missing.getMessage().contains("shard 1 (shard-001.pool) is missing"), missing.getMessage());

        // Back in place: opens.
        Files.move(pools.pool("saved.pool"), shard1);
        assertArrayEquals(shard1Bytes, Files.readAllBytes(shard1));
        GPHashIndex.builder(dir).open().close();

        // One bit of the manifest flipped.
        Path manifest = dir.resolve(ShardManifest.FILE_NAME);
        byte[] m = Files.readAllBytes(manifest);
        m[20] ^= 1;
        Files.write(manifest, m);
        before = contents(dir);
        PoolFormatException crc = assertThrows(PoolFormatException.class, () -> GPHashIndex.builder(dir).open());
        assertEquals(PoolFormatException.Reason.CHECKSUM_MISMATCH, crc.reason());
        assertContentsUnchanged(before, contents(dir));

        // No manifest at all (a create that did not finish).
        Files.delete(manifest);
        PoolIoException unfinished = assertThrows(PoolIoException.class, () -> GPHashIndex.builder(dir).open());
        assertTrue(unfinished.getMessage().contains("not a sharded gphash index"), unfinished.getMessage());
    }

    private static byte[][] contents(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            List<Path> sorted = files.sorted().toList();
            byte[][] all = new byte[sorted.size()][];
            for (int i = 0; i < all.length; i++) {
                all[i] = Files.readAllBytes(sorted.get(i));
            }
            return all;
        }
    }

    private static void assertContentsUnchanged(byte[][] before, byte[][] after) {
        assertEquals(before.length, after.length, "files in the directory");
        for (int i = 0; i < before.length; i++) {
            assertArrayEquals(before[i], after[i], "file " + i + " of the directory was written by a refused open");
        }
    }

    @Test
    void badShardCountsAndDevicesAreRefusedByName() {
        Path dir = pools.pool("never");
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> GPHashIndex.builder(dir).shards(0));
        assertTrue(zero.getMessage().contains("shards must be 1 to 256, got 0"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> GPHashIndex.builder(dir).shards(257));
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> GPHashIndex.builder(dir).devices(0, -1));
        assertTrue(negative.getMessage().contains("got -1"), negative.getMessage());
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> GPHashIndex.builder(dir).devices(1, 0, 1));
        assertTrue(twice.getMessage().contains("names a GPU twice"), twice.getMessage());
        assertFalse(Files.exists(dir));
    }

    @Test
    void aCreateThatFailsLeavesNothingBehind() {
        Path dir = pools.pool("too-small");
        RuntimeException e = assertThrows(RuntimeException.class,
                () -> GPHashIndex.builder(dir).keySize(8).valueSize(32).shards(2).maxPoolBytes(8192).create());
        assertTrue(e.getMessage().contains("maxPoolBytes 4096"), "a shard's create failed (its half of the bytes): " + e);
        assertFalse(Files.exists(dir), "a failed create removed the directory and what it made: " + e);
    }

    @Test
    void aSingleShardAndEveryCallGoThroughTheShardOfItsKey() {
        Path dir = pools.pool("idx");
        try (GPHashIndex index = create(dir, 1)) {
            assertTrue(index.put(5L, value(5, 1)));
            assertTrue(index.compareAndSet(longKey(5), value(5, 1), value(5, 2)));
            assertFalse(index.compareAndDelete(longKey(5), value(5, 1)));
            assertTrue(index.delete(5L));
            assertEquals(0, index.size());
        }
        try (GPHashIndex index = create(pools.pool("four"), 4)) {
            for (long k = 0; k < 100; k++) {
                assertTrue(index.insert(longKey(k), value(k, 1)));
                assertTrue(index.update(longKey(k), value(k, 2)));
            }
            for (long k = 0; k < 100; k++) {
                assertArrayEquals(value(k, 2), index.get(k));
                assertTrue(index.compareAndDelete(longKey(k), value(k, 2)));
            }
            assertEquals(0, index.size());
        }
    }
}
