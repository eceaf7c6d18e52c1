package org.gphash.shard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;

import org.gphash.GPHashIndex;
import org.gphash.error.PoolFormatException;
import org.gphash.format.HeaderStore;
import org.gphash.format.PoolHeader;
import org.gphash.index.api.TestPools;
import org.gphash.persistence.PoolFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 52, items 4 and 8: a sharded index no longer trusts its manifest alone. Each case below was
 * accepted before (keys hidden, `check` sound) and is refused now, naming what disagrees, with
 * nothing written; `check` finds it too.
 */
class ShardTamperingTest {

    private static final int KEYS = 3_000;
    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    private static byte[] value(long k, long version) {
        byte[] v = new byte[16];
        java.nio.ByteBuffer.wrap(v).putLong(k).putLong(version);
        return v;
    }

    /** A closed index of KEYS keys at version 0, over three shards. */
    private Path index() {
        Path dir = pools.pool("idx");
        try (GPHashIndex index = GPHashIndex.builder(dir).keySize(8).valueSize(16).shards(3).initialCapacity(KEYS).create()) {
            for (long k = 0; k < KEYS; k++) {
                index.put(k, value(k, 0));
            }
        }
        return dir;
    }

    private static void assertRefused(Path dir, String why) throws IOException {
        byte[][] before = contents(dir);
        PoolFormatException e = assertThrows(PoolFormatException.class, () -> GPHashIndex.builder(dir).open());
        assertTrue(e.getMessage().contains(why), e.getMessage());
        assertTrue(e.getMessage().contains("nothing was changed"), e.getMessage());
        assertTrue(Arrays.deepEquals(before, contents(dir)), "a refused open wrote to the index");
        ShardManifest m = ShardManifest.read(dir);
        int refusedShards = 0;
        for (int s = 0; s < m.shards(); s++) {
            try {
                ShardedIndexes.checkShard(dir, m, s);
            } catch (PoolFormatException refused) {
                refusedShards++;
            }
        }
        assertTrue(refusedShards > 0, "check found every shard in agreement");
    }

    private static byte[][] contents(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            return files.sorted().map(p -> {
                try {
                    return Files.readAllBytes(p);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).toArray(byte[][]::new);
        }
    }

    @Test
    void aManifestWithAnotherSeedIsRefused() throws IOException {
        Path dir = index();
        ShardManifest m = ShardManifest.read(dir);
        new ShardManifest(m.shards(), m.seed() + 1, m.geometry(), m.created(), m.poolIds(), m.indexId(), m.epoch()).write(dir);
        assertRefused(dir, "shard seed");
    }

    @Test
    void aManifestThatLeavesOutAShardIsRefused() throws IOException {
        Path dir = index();
        ShardManifest m = ShardManifest.read(dir);
        new ShardManifest(2, m.seed(), m.geometry(), m.created(), Arrays.copyOf(m.poolIds(), 2), m.indexId(), m.epoch())
                .write(dir);
        assertRefused(dir, "is shard 0 of 3 by its own header");
    }

    @Test
    void shardsSwappedWithTheirIdentitiesAreRefused() throws IOException {
        Path dir = index();
        ShardManifest m = ShardManifest.read(dir);
        Path a = ShardManifest.shardPath(dir, 0);
        Path b = ShardManifest.shardPath(dir, 1);
        Path tmp = dir.resolve("swap");
        Files.move(a, tmp);
        Files.move(b, a);
        Files.move(tmp, b);
        long[] ids = m.poolIds();
        long t = ids[0];
        ids[0] = ids[1];
        ids[1] = t;
        new ShardManifest(m.shards(), m.seed(), m.geometry(), m.created(), ids, m.indexId(), m.epoch()).write(dir);
        assertRefused(dir, "manifest puts it at 0 of 3");
    }

    @Test
    void aShardRestoredFromAnOlderCopyIsRefusedAndTheRightOneOpens() throws IOException {
        Path dir = index();
        Path shard = ShardManifest.shardPath(dir, 1);
        Path older = pools.pool("shard-1.older");
        Files.copy(shard, older);
        try (GPHashIndex index = GPHashIndex.builder(dir).open()) {
            for (long k = 0; k < KEYS; k++) {
                index.put(k, value(k, 1));
            }
        }
        Path current = pools.pool("shard-1.current");
        Files.copy(shard, current);
        Files.copy(older, shard, StandardCopyOption.REPLACE_EXISTING);
        assertRefused(dir, "restored from an older copy of itself");
        Files.copy(current, shard, StandardCopyOption.REPLACE_EXISTING);
        try (GPHashIndex index = GPHashIndex.builder(dir).open()) {
            for (long k = 0; k < KEYS; k++) {
                assertArrayEquals(value(k, 1), index.get(k), "key " + k);
            }
        }
    }

    /** A crash after the shards took the new epoch and before the manifest did: the next open goes on. */
    @Test
    void aManifestOneEpochBehindItsShardsOpens() throws IOException {
        Path dir = index();
        try (GPHashIndex index = GPHashIndex.builder(dir).open()) {
            index.put(KEYS, value(KEYS, 0));
        }
        ShardManifest m = ShardManifest.read(dir);
        m.at(m.indexId(), m.epoch() - 1).write(dir);
        try (GPHashIndex index = GPHashIndex.builder(dir).open()) {
            assertArrayEquals(value(KEYS, 0), index.get(KEYS));
        }
        assertEquals(m.epoch() + 1, ShardManifest.read(dir).epoch());
    }

    /** An index made before shards carried membership (manifest version 1) opens and is upgraded. */
    @Test
    void aVersionOneIndexIsUpgradedOnOpen() throws IOException {
        Path dir = index();
        ShardManifest m = ShardManifest.read(dir);
        for (int s = 0; s < m.shards(); s++) {
            try (PoolFile file = PoolFile.open(ShardManifest.shardPath(dir, s), false)) {
                PoolHeader h = HeaderStore.read(file).header();
                new HeaderStore(file, h, () -> { }).commit(h.withMembership(null));
            }
        }
        byte[] v2 = m.encode();
        byte[] v1 = new byte[56 + 8 * m.shards() + 4];
        System.arraycopy(v2, 0, v1, 0, 56);
        System.arraycopy(v2, 72, v1, 56, 8 * m.shards());
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(v1).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putInt(8, 1);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(v1, 0, v1.length - 4);
        b.putInt(v1.length - 4, (int) crc.getValue());
        Files.write(dir.resolve(ShardManifest.FILE_NAME), v1);
        ShardManifest old = ShardManifest.read(dir);
        assertEquals(0, old.indexId());
        try (GPHashIndex index = GPHashIndex.builder(dir).open()) {
            assertArrayEquals(value(7, 0), index.get(7));
            assertNull(index.get(KEYS + 1));
        }
        ShardManifest upgraded = ShardManifest.read(dir);
        assertTrue(upgraded.indexId() != 0 && upgraded.epoch() == 1, upgraded.toString());
        for (int s = 0; s < m.shards(); s++) {
            ShardedIndexes.checkShard(dir, upgraded, s);
            assertEquals(0, ShardedIndexes.misplacedItems(dir, upgraded, s));
        }
    }

    /** Item 5: a FIFO in the manifest's place is refused at once (the read used to block for ever). */
    @Test
    void aFifoAsTheManifestIsRefusedWithoutHanging() throws Exception {
        Path dir = index();
        Path manifest = dir.resolve(ShardManifest.FILE_NAME);
        Files.delete(manifest);
        Process mkfifo = new ProcessBuilder("mkfifo", manifest.toString()).inheritIO().start();
        org.junit.jupiter.api.Assumptions.assumeTrue(mkfifo.waitFor() == 0, "mkfifo is not available");
        org.gphash.error.PoolIoException e = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                java.time.Duration.ofSeconds(20), () -> assertThrows(org.gphash.error.PoolIoException.class,
                        () -> GPHashIndex.builder(dir).open()));
        assertTrue(e.getMessage().contains("FIFO"), e.getMessage());
        assertThrows(org.gphash.error.PoolIoException.class, () -> ShardManifest.read(dir));
    }

    /** Item 7: the directory and the manifest get the single pool's ownership, mode and link checks. */
    @Test
    void aWritableDirectoryOrManifestAndALinkedManifestAreRefused() throws IOException {
        Path dir = index();
        Path manifest = dir.resolve(ShardManifest.FILE_NAME);
        java.nio.file.attribute.PosixFileAttributeView view =
                Files.getFileAttributeView(dir, java.nio.file.attribute.PosixFileAttributeView.class);
        org.junit.jupiter.api.Assumptions.assumeTrue(view != null, "no POSIX permissions here");

        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        org.gphash.error.PoolIoException e = assertThrows(org.gphash.error.PoolIoException.class,
                () -> GPHashIndex.builder(dir).open());
        assertTrue(e.getMessage().contains("chmod 700"), e.getMessage());
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));

        Files.setPosixFilePermissions(manifest, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        e = assertThrows(org.gphash.error.PoolIoException.class, () -> GPHashIndex.builder(dir).open());
        assertTrue(e.getMessage().contains("manifest is owner-only"), e.getMessage());
        Files.setPosixFilePermissions(manifest, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));

        Path elsewhere = pools.pool("manifest-elsewhere");
        Files.move(manifest, elsewhere);
        Files.createSymbolicLink(manifest, elsewhere);
        e = assertThrows(org.gphash.error.PoolIoException.class, () -> GPHashIndex.builder(dir).open());
        assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
        Files.delete(manifest);
        Files.move(elsewhere, manifest);
        GPHashIndex.builder(dir).open().close();
    }

    /** Item 10: shards(n) on a plain pool file is refused, not quietly opened as one pool. */
    @Test
    void shardsOnAPlainPoolFileIsRefused() {
        Path p = pools.pool("plain.pool");
        GPHashIndex.builder(p).keySize(8).valueSize(16).create().close();
        org.gphash.PoolConfigMismatchException e = assertThrows(org.gphash.PoolConfigMismatchException.class,
                () -> GPHashIndex.builder(p).shards(3).open());
        assertTrue(e.getMessage().contains("not the directory of a sharded index"), e.getMessage());
        GPHashIndex.builder(p).open().close();
    }
}
