package org.gphash.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.Geometry;
import org.gphash.error.PoolFormatException;
import org.gphash.error.PoolIoException;
import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The manifest's format: what it writes reads back, and every kind of damage is refused by name. */
class ShardManifestTest {

    private final TestPools pools = TestPools.create();
    private final ShardManifest manifest = new ShardManifest(3, 0x5eedL, new Geometry(2, 2, 8, 8, 128, false),
            1_790_000_000_000L, new long[] {11, 22, 33}, 0xabcdefL, 3);

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    @Test
    void writesOwnerOnlyAndReadsBackWhole() throws Exception {
        Path dir = pools.dir();
        manifest.write(dir);
        Path file = dir.resolve(ShardManifest.FILE_NAME);
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertFalse(Files.exists(dir.resolve(ShardManifest.FILE_NAME + ".tmp")));
        assertEquals(manifest, ShardManifest.read(dir));
        assertEquals(72 + 3 * 8 + 4, Files.size(file));
        assertTrue(Files.isRegularFile(dir.resolve(ShardManifest.FILE_NAME)));
        assertEquals("shard-002.pool", ShardManifest.shardFileName(2));
    }

    @Test
    void everyByteIsCoveredByTheChecksum() {
        byte[] good = manifest.encode();
        for (int i = 0; i < good.length; i++) {
            byte[] bad = good.clone();
            bad[i] ^= 0x10;
            int at = i;
            PoolFormatException e = assertThrows(PoolFormatException.class, () -> ShardManifest.decode(bad, Path.of("m")),
                    "byte " + at);
            assertTrue(e.reason() == PoolFormatException.Reason.CHECKSUM_MISMATCH
                    || (at < 8 && e.reason() == PoolFormatException.Reason.NOT_A_POOL), "byte " + at + ": " + e.reason());
        }
    }

    @Test
    void refusesOtherFilesOtherVersionsAndTruncation() {
        byte[] good = manifest.encode();
        assertEquals(PoolFormatException.Reason.NOT_A_POOL, assertThrows(PoolFormatException.class,
                () -> ShardManifest.decode(new byte[100], Path.of("m"))).reason());
        byte[] cut = java.util.Arrays.copyOf(good, good.length - 8);
        assertThrows(PoolFormatException.class, () -> ShardManifest.decode(cut, Path.of("m")));
        // A whole manifest of another version: the checksum verifies, the version does not.
        ShardManifest other = manifest;
        byte[] v2 = other.encode();
        java.lang.foreign.MemorySegment s = java.lang.foreign.MemorySegment.ofArray(v2);
        s.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, 8, 3);
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update(v2, 0, v2.length - 4);
        s.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, v2.length - 4, (int) c.getValue());
        PoolFormatException e = assertThrows(PoolFormatException.class, () -> ShardManifest.decode(v2, Path.of("m")));
        assertEquals(PoolFormatException.Reason.WRONG_VERSION, e.reason());
        assertTrue(e.getMessage().contains("version 3"), e.getMessage());
    }

    @Test
    void aDirectoryWithoutAManifestIsAnUnfinishedCreate() {
        PoolIoException e = assertThrows(PoolIoException.class, () -> ShardManifest.read(pools.dir()));
        assertTrue(e.getMessage().contains("not a sharded gphash index"), e.getMessage());
        assertFalse(Files.exists(pools.dir().resolve(ShardManifest.FILE_NAME)));
    }
}
