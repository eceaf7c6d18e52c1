package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.GPHashIndex;
import org.gphash.format.SlotMeta;
import org.gphash.shard.ShardManifest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code gphash check DIR} checks a sharded index (issue 30): its manifest and every shard pool, changing nothing. */
class ShardedCheckTest {

    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    private Path index(String name, int shards) {
        Path dir = f.dir.resolve(name);
        try (GPHashIndex index = GPHashIndex.builder(dir).keySize(8).valueSize(ToolFixture.VALUE_SIZE).shards(shards).create()) {
            for (long k = 0; k < 400; k++) {
                index.put(k, ToolFixture.value(k));
            }
        }
        return dir;
    }

    @Test
    void aSoundShardedIndexPassesAndEveryShardIsReported() throws Exception {
        Path dir = index("idx", 3);
        byte[] shard0 = Files.readAllBytes(ShardManifest.shardPath(dir, 0));
        ToolFixture.Run r = ToolFixture.tool("check", dir.toString());
        assertEquals(0, r.code(), r.all());
        assertTrue(r.out().contains("3 shards"), r.out());
        assertTrue(r.out().contains("shard-002.pool"), r.out());
        assertTrue(r.out().contains("index check: sound (3 shards)"), r.out());
        ToolFixture.Run j = ToolFixture.tool("check", "--json", dir.toString());
        assertEquals(0, j.code(), j.all());
        assertTrue(j.out().startsWith("{\"index\":") && j.out().contains("\"shards\":3,\"sound\":true"), j.out());
        assertArrayEquals(shard0, Files.readAllBytes(ShardManifest.shardPath(dir, 0)), "check wrote to a shard");
    }

    @Test
    void aDamagedShardAForeignShardAndAMissingOneAreNamed() throws Exception {
        Path dir = index("idx", 2);
        Path other = index("other", 2);
        // Damage in shard 1: an item left in the INSERT state is reported as that shard's problem.
        Path shard1 = ShardManifest.shardPath(dir, 1);
        ToolFixture.writeLong(shard1, ToolFixture.items(shard1).get(0).offset(), SlotMeta.INSERT);
        ToolFixture.Run damaged = ToolFixture.tool("check", dir.toString());
        assertEquals(1, damaged.code(), damaged.all());
        assertTrue(damaged.out().contains("index check: NOT sound"), damaged.out());

        // Another index's shard in shard 1's place: sound as a pool, but not this index's.
        Files.delete(shard1);
        Files.copy(ShardManifest.shardPath(other, 1), shard1);
        ToolFixture.Run foreign = ToolFixture.tool("check", dir.toString());
        assertEquals(1, foreign.code(), foreign.all());
        assertTrue(foreign.out().contains("should be pool"), foreign.out());

        Files.delete(shard1);
        ToolFixture.Run missing = ToolFixture.tool("check", dir.toString());
        assertEquals(2, missing.code(), missing.all());
        assertTrue(missing.out().contains("shard 1 (shard-001.pool) is missing"), missing.out());

        Files.delete(dir.resolve(ShardManifest.FILE_NAME));
        ToolFixture.Run noManifest = ToolFixture.tool("check", dir.toString());
        assertEquals(2, noManifest.code(), noManifest.all());
        assertTrue(noManifest.out().contains("no " + ShardManifest.FILE_NAME), noManifest.out());
    }

    /** Issue 55, item 2: every tool takes a sharded index's directory, as check does. */
    @Test
    void statsDumpSnapshotAndRecoverTakeTheDirectory() throws Exception {
        Path dir = index("idx", 3);
        ToolFixture.Run stats = ToolFixture.tool("stats", dir.toString());
        assertEquals(0, stats.code(), stats.all());
        assertTrue(stats.out().contains("index: 400 items in 3 shards"), stats.out());
        ToolFixture.Run statsJson = ToolFixture.tool("stats", "--json", dir.toString());
        assertEquals(0, statsJson.code(), statsJson.all());
        assertTrue(statsJson.out().startsWith("{\"index\":") && statsJson.out().contains("\"shards\":3,\"items\":400"),
                statsJson.out());

        Path dump = f.dir.resolve("idx.dump");
        ToolFixture.Run d = ToolFixture.tool("dump", dir.toString(), dump.toString());
        assertEquals(0, d.code(), d.all());
        assertTrue(d.out().contains("dump: 400 items"), d.out());
        Path back = f.dir.resolve("back.pool");
        assertEquals(0, ToolFixture.tool("import", dump.toString(), back.toString()).code());
        try (GPHashIndex index = GPHashIndex.builder(back).open()) {
            for (long k = 0; k < 400; k++) {
                assertArrayEquals(ToolFixture.value(k), index.get(k), "key " + k);
            }
        }

        Path copy = f.dir.resolve("copy");
        ToolFixture.Run snap = ToolFixture.tool("snapshot", dir.toString(), copy.toString());
        assertEquals(0, snap.code(), snap.all());
        ToolFixture.Run again = ToolFixture.tool("snapshot", dir.toString(), copy.toString());
        assertEquals(1, again.code(), again.all());
        assertTrue(again.err().contains("cannot snapshot to") && again.err().contains("it exists"), again.all());
        try (GPHashIndex index = GPHashIndex.builder(copy).open()) {
            assertEquals(400, index.size());
            assertArrayEquals(ToolFixture.value(5), index.get(5));
        }

        ToolFixture.Run rec = ToolFixture.tool("recover", dir.toString());
        assertEquals(0, rec.code(), rec.all());
        assertTrue(rec.out().contains("recover: done, every shard is sound"), rec.out());
        assertEquals(0, ToolFixture.tool("check", dir.toString()).code());
    }
}
