package org.gphash.shard;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Set;
import java.util.zip.CRC32C;

import org.gphash.Geometry;
import org.gphash.error.PoolFormatException;
import org.gphash.error.PoolIoException;
import org.gphash.format.PoolHeader;
import org.gphash.persistence.PathRefusals;

/**
 * The manifest of a sharded index: the file {@value #FILE_NAME} in its directory, saying how many
 * shards there are, the seed of the shard function, the geometry every shard pool has, and each
 * shard pool's identity (the random number its header got at create), so that a pool swapped in
 * from another index, or a shard file missing, is refused before anything is written.
 *
 * <p>The manifest alone is not trusted (issue 52: a crafted one, its CRC recomputed, with another
 * seed, a shard left out or shards swapped, hid up to 2/3 of the keys): every shard's header also
 * records the index's identity, the seed, its shard number and the count, and the open epoch
 * ({@link PoolHeader.ShardMembership}); open compares them all.
 *
 * <p>Layout (little-endian): magic "GPHSHARD" (8), version (4), shard count (4), shard seed (8),
 * key size, value size, levels, hashes, slots per bucket, flags (bit 0: item checksums) (4 each),
 * created (8, ms since the epoch), index identity (8), open epoch (8), then one pool identity per
 * shard (8 each), then a CRC32C of every byte before it (4). Version 1 (before 2026-11-29) has no
 * identity and epoch; open upgrades it. Written to a temporary name, synced, and renamed into place
 * (then the directory synced), so a manifest is whole or absent; an index whose manifest is absent
 * was never completely created.
 *
 * @param shards    the number of shards
 * @param seed      the shard function's seed
 * @param geometry  every shard pool's geometry
 * @param created   when the index was created, ms since the epoch
 * @param poolIds   shard {@code i}'s pool identity
 * @param indexId   the index's identity, random at create (0: a version 1 manifest, which has none)
 * @param epoch     the open epoch: raised by every open, first in every shard, then here
 */
public record ShardManifest(int shards, long seed, Geometry geometry, long created, long[] poolIds, long indexId,
                            long epoch) {

    /** The manifest's name in the directory. */
    public static final String FILE_NAME = "gphash-shards.manifest";
    /** "GPHSHARD" as a little-endian long. */
    static final long MAGIC = 0x4452414853485047L;
    /** The layout version this build writes and reads. */
    public static final int VERSION = 2;
    private static final int FIXED_BYTES = 72;
    private static final int V1_FIXED_BYTES = 56;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Checks the fields. */
    public ShardManifest {
        poolIds = poolIds.clone();
        if (shards < 1 || shards > org.gphash.Placement.MAX_SHARDS || poolIds.length != shards) {
            throw new IllegalArgumentException(shards + " shards with " + poolIds.length + " pool identities");
        }
    }

    /** A manifest without identity and epoch (as version 1 had). */
    public ShardManifest(int shards, long seed, Geometry geometry, long created, long[] poolIds) {
        this(shards, seed, geometry, created, poolIds, 0, 0);
    }

    /** {@return the same manifest with identity {@code id} at epoch {@code newEpoch}} */
    public ShardManifest at(long id, long newEpoch) {
        return new ShardManifest(shards, seed, geometry, created, poolIds, id, newEpoch);
    }

    /** {@return shard {@code i}'s pool identity at index {@code i} (a copy)} */
    @Override
    public long[] poolIds() {
        return poolIds.clone();
    }

    /**
     * The file name of a shard's pool in the directory.
     *
     * @param i the shard
     * @return {@code shard-NNN.pool}
     */
    public static String shardFileName(int i) {
        return String.format("shard-%03d.pool", i);
    }

    /**
     * Where a shard's pool lies.
     *
     * @param dir the sharded index's directory
     * @param i   the shard
     * @return its pool file
     */
    public static Path shardPath(Path dir, int i) {
        return dir.resolve(shardFileName(i));
    }

    /** {@return the manifest's bytes, checksum included} */
    byte[] encode() {
        int length = FIXED_BYTES + 8 * shards + 4;
        MemorySegment m = MemorySegment.ofArray(new byte[length]);
        m.set(LONG, 0, MAGIC);
        m.set(INT, 8, VERSION);
        m.set(INT, 12, shards);
        m.set(LONG, 16, seed);
        m.set(INT, 24, geometry.keySize());
        m.set(INT, 28, geometry.valueSize());
        m.set(INT, 32, geometry.levels());
        m.set(INT, 36, geometry.hashes());
        m.set(INT, 40, geometry.slotsPerBucket());
        m.set(INT, 44, geometry.itemChecksums() ? 1 : 0);
        m.set(LONG, 48, created);
        m.set(LONG, 56, indexId);
        m.set(LONG, 64, epoch);
        for (int i = 0; i < shards; i++) {
            m.set(LONG, FIXED_BYTES + 8L * i, poolIds[i]);
        }
        m.set(INT, length - 4, crc(m.toArray(ValueLayout.JAVA_BYTE), length - 4));
        return m.toArray(ValueLayout.JAVA_BYTE);
    }

    /**
     * Decodes a manifest, refusing anything but a whole one of this version.
     *
     * @param bytes the file's contents
     * @param file  the file, for messages
     * @return the manifest
     * @throws PoolFormatException naming what is wrong
     */
    static ShardManifest decode(byte[] bytes, Path file) {
        MemorySegment m = MemorySegment.ofArray(bytes);
        if (bytes.length < V1_FIXED_BYTES + 12 || m.get(LONG, 0) != MAGIC) {
            throw new PoolFormatException(PoolFormatException.Reason.NOT_A_POOL, file,
                    "not a gphash shard manifest (" + bytes.length + " bytes, no \"GPHSHARD\" magic)");
        }
        int stored = m.get(INT, bytes.length - 4);
        if (crc(bytes, bytes.length - 4) != stored) {
            throw new PoolFormatException(PoolFormatException.Reason.CHECKSUM_MISMATCH, file,
                    "the shard manifest's CRC32C does not match its contents (damaged, or torn by an editor)");
        }
        int version = m.get(INT, 8);
        if (version != VERSION && version != 1) {
            throw new PoolFormatException(PoolFormatException.Reason.WRONG_VERSION, file,
                    "shard manifest version " + version + "; this build reads versions 1 and " + VERSION);
        }
        int fixed = version == 1 ? V1_FIXED_BYTES : FIXED_BYTES;
        int shards = m.get(INT, 12);
        if (shards < 1 || shards > org.gphash.Placement.MAX_SHARDS || bytes.length != fixed + 8L * shards + 4) {
            throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, file,
                    "the shard manifest says " + shards + " shards in " + bytes.length + " bytes");
        }
        Geometry g;
        try {
            g = new Geometry(m.get(INT, 32), m.get(INT, 36), m.get(INT, 40), m.get(INT, 24), m.get(INT, 28),
                    (m.get(INT, 44) & 1) != 0);
        } catch (IllegalArgumentException e) {
            throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, file, "impossible geometry: " + e.getMessage());
        }
        long[] ids = new long[shards];
        for (int i = 0; i < shards; i++) {
            ids[i] = m.get(LONG, fixed + 8L * i);
        }
        long indexId = version == 1 ? 0 : m.get(LONG, 56);
        long epoch = version == 1 ? 0 : m.get(LONG, 64);
        if (version != 1 && (indexId == 0 || epoch < 1)) {
            throw new PoolFormatException(PoolFormatException.Reason.CORRUPT, file,
                    "the shard manifest has index identity " + indexId + " and epoch " + epoch);
        }
        return new ShardManifest(shards, m.get(LONG, 16), g, m.get(LONG, 48), ids, indexId, epoch);
    }

    /**
     * Reads the manifest of the sharded index at {@code dir}.
     *
     * @param dir the index's directory
     * @return its manifest
     * @throws PoolIoException when there is none (an index never completely created) or it cannot be read
     * @throws PoolFormatException when it is not a whole manifest of this version
     */
    public static ShardManifest read(Path dir) {
        Path file = dir.resolve(FILE_NAME);
        String dirRefusal = PathRefusals.ofIndexDirectory(dir);
        if (dirRefusal != null) {
            throw new PoolIoException("cannot open sharded index " + dir + ": " + dirRefusal + "; nothing was changed");
        }
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            // Create makes the directory whole, manifest included, under a hidden name and renames it
            // into place: a directory here without one was not made by a create of this build.
            throw new PoolIoException("cannot open sharded index " + dir + ": it has no " + FILE_NAME + ", so it is not "
                    + "a sharded gphash index (an index is created whole, manifest included; nothing was changed)");
        }
        // Checked before it is read: a FIFO would block the read for ever (issue 52), and the manifest
        // decides where every key lives, so only its owner may write it.
        String fileRefusal = PathRefusals.ofPoolFile(file);
        if (fileRefusal != null) {
            throw new PoolIoException("cannot open sharded index " + dir + ": its " + FILE_NAME + ": "
                    + fileRefusal.replace("pools are owner-only", "a manifest is owner-only").replace(", which open refuses "
                    + "unless followSymlinks(true) is set", ", which is refused") + "; nothing was changed");
        }
        try {
            return decode(Files.readAllBytes(file), file);
        } catch (IOException e) {
            throw new PoolIoException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Writes this manifest into {@code dir} (owner-only), whole or not at all: to a temporary name,
     * synced, renamed into place, the directory synced.
     *
     * @param dir the index's directory
     */
    public void write(Path dir) {
        Path tmp = dir.resolve(FILE_NAME + ".tmp");
        Path file = dir.resolve(FILE_NAME);
        try {
            Files.deleteIfExists(tmp);
            try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
                ByteBuffer b = ByteBuffer.wrap(encode());
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file);
            }
            syncDirectory(dir);
        } catch (IOException e) {
            throw new PoolIoException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /** Makes a rename in {@code dir} durable (where the platform lets a directory be opened). */
    static void syncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            // Some file systems refuse to open a directory; the rename is then as durable as they make it.
        }
    }

    private static int crc(byte[] bytes, int length) {
        CRC32C c = new CRC32C();
        c.update(bytes, 0, length);
        return (int) c.getValue();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ShardManifest m && shards == m.shards && seed == m.seed && geometry.equals(m.geometry)
                && created == m.created && Arrays.equals(poolIds, m.poolIds) && indexId == m.indexId && epoch == m.epoch;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(poolIds) * 31 + Long.hashCode(seed);
    }

    @Override
    public String toString() {
        return "ShardManifest[shards=" + shards + ", seed=" + seed + ", geometry=" + geometry + ", poolIds="
                + Arrays.toString(poolIds) + ", indexId=" + Long.toHexString(indexId) + ", epoch=" + epoch + "]";
    }
}
