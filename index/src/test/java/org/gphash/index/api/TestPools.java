package org.gphash.index.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;


/**
 * Where tests put pools: a fresh directory on tmpfs ({@code /dev/shm}) when there is one, because
 * every persist is an msync and on a disk-backed file system that makes a test suite take minutes;
 * otherwise under {@code java.io.tmpdir}. The persist calls are the same either way.
 */
public final class TestPools implements AutoCloseable {

    private final Path dir;

    private TestPools(Path dir) {
        this.dir = dir;
    }

    public static TestPools create() {
        try {
            Path shm = Path.of("/dev/shm");
            Path base = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
            return new TestPools(Files.createTempDirectory(base, "gphash-test-"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Path dir() {
        return dir;
    }

    public Path pool(String name) {
        return dir.resolve(name);
    }

    /**
     * The bytes of a {@code long} key as the API documents them (8 bytes, little-endian), written
     * here apart from the API's own encoder so that a test of the {@code long} methods checks it.
     */
    public static byte[] longKey(long key) {
        return ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN).putLong(key).array();
    }

    /** The slot holding the 8-byte {@code key} in the pool at {@code p} (read-only; the pool must be closed). */
    public static long slotOf(Path p, long key) {
        try (org.gphash.table.PoolInspector in = org.gphash.table.PoolInspector.open(p)) {
            org.gphash.table.TableLayout t = in.layout();
            java.lang.foreign.MemorySegment s = in.segment();
            int slotSize = in.geometry().slotSize();
            for (int d = 0; d < t.levelCount(); d++) {
                for (long i = 0; i < t.bucketsAtDepth(d) * in.geometry().slotsPerBucket(); i++) {
                    long slot = t.levelOffset(d) + i * slotSize;
                    if (org.gphash.format.SlotMeta.isItem(s.get(java.lang.foreign.ValueLayout.JAVA_LONG, slot))
                            && s.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, slot + org.gphash.format.SlotMeta.BYTES) == key) {
                        return slot;
                    }
                }
            }
        }
        throw new AssertionError("key " + key + " not found in " + p);
    }

    /** Removes the directory and what is in it; again, or after the directory went, does nothing. */
    @Override
    public void close() {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
