package org.gphash.cuda;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.cuda.path.BatchPath;
import org.gphash.cuda.runtime.CudaRuntime;
import org.gphash.index.api.TestPools;

/** What the GPU tests share: skipping without a GPU, pools on tmpfs, recognisable values. */
public final class GpuTestSupport implements AutoCloseable {

    public final Path dir;
    /** The pools' directory, made and removed as every test's pools are (the index's TestPools). */
    private final TestPools pools;

    private GpuTestSupport(TestPools pools) {
        this.pools = pools;
        this.dir = pools.dir();
    }

    /** Skips the calling test where there is no CUDA driver or GPU (CI), runs it where there is. */
    public static void assumeGpu() {
        assumeTrue(CudaRuntime.available(), "no usable CUDA driver and GPU here: GPU test skipped");
    }

    /** A fresh directory on /dev/shm (GPU pools must be on tmpfs, where TestPools puts them when it can). */
    public static GpuTestSupport create() {
        Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm), "no writable /dev/shm");
        return new GpuTestSupport(TestPools.create());
    }

    /** How {@code engine} runs batches, for tests in other packages that look inside a path. */
    public static BatchPath pathOf(GpuEngine engine) {
        return engine.path();
    }

    public Path pool(String name) {
        return dir.resolve(name);
    }

    /**
     * The pool format the configs below make pools in: {@code -Dgphash.test.poolFormat=3} runs every test
     * built on them in format 3 (issue 53: `GPHASH_TEST_OPTS=-Dgphash.test.poolFormat=3 bash
     * cuda/device-check.sh tests` on the GPU machine); 0, the default, is the builder's (format 2).
     */
    public static final String POOL_FORMAT_PROPERTY = "gphash.test.poolFormat";
    /** The format under test: {@link #POOL_FORMAT_PROPERTY}, or 0 for the builder's. */
    public static final int POOL_FORMAT = Integer.getInteger(POOL_FORMAT_PROPERTY, 0);

    public static GPHashConfig config(Path path, Backend backend, int keySize, int levels, int hashes, int slots,
                               long capacity, long seed) {
        return inFormat(GPHashIndex.builder(path).backend(backend).keySize(keySize).valueSize(VALUE_SIZE).levels(levels)
                .hashes(hashes).slotsPerBucket(slots).initialCapacity(capacity).seed(seed), POOL_FORMAT);
    }

    /** A GPU engine's config with the given BktCache. */
    public static GPHashConfig config(Path path, int keySize, int levels, int hashes, int slots, long capacity, long seed,
                               BktCacheConfig cache) {
        return inFormat(GPHashIndex.builder(path).backend(Backend.GPU).keySize(keySize).valueSize(VALUE_SIZE).levels(levels)
                .hashes(hashes).slotsPerBucket(slots).initialCapacity(capacity).seed(seed).bucketCache(cache), POOL_FORMAT);
    }

    /**
     * The value size of the configs above: {@code -Dgphash.test.valueSize=120} runs the tests built on
     * them with values that format 3 frames (behind a header, blocks of 128), where 128, the default,
     * is a block size and format 3 keeps its values bare (issue 53).
     */
    public static final String VALUE_SIZE_PROPERTY = "gphash.test.valueSize";
    public static final int VALUE_SIZE = Integer.getInteger(VALUE_SIZE_PROPERTY, 128);

    /** {@code builder}'s config in pool format {@code format} where it is not 0. */
    private static GPHashConfig inFormat(GPHashIndex.Builder builder, int format) {
        return inTestFormat(builder, format).config();
    }

    /** {@code builder} making pools in the format under test ({@link #POOL_FORMAT}), for tests that build their own. */
    public static GPHashIndex.Builder inTestFormat(GPHashIndex.Builder builder) {
        return inTestFormat(builder, POOL_FORMAT);
    }

    private static GPHashIndex.Builder inTestFormat(GPHashIndex.Builder builder, int format) {
        return format == 0 ? builder : builder.poolFormat(format);
    }

    /**
     * Random mixed batches of distinct keys, every kind (the conditional ones expecting the last value
     * written to their key most of the time, or one never written), with a share of inserts: the
     * stream DifferentialTest and ShardedGpuTest run through an engine and the CPU engine alike.
     */
    public static final class RandomBatches {
        private final java.util.Random random;
        private final int keySpace;
        private final int keySize;
        private final java.util.Map<Long, byte[]> lastWritten = new java.util.HashMap<>();
        private long version;

        public RandomBatches(java.util.Random random, int keySpace, int keySize) {
            this.random = random;
            this.keySpace = keySpace;
            this.keySize = keySize;
        }

        /** Appends {@code n} operations on distinct keys to {@code batch} ({@code n} at most the key space). */
        public void fill(org.gphash.Batch batch, int n, double insertShare) {
            org.gphash.OpKind[] kinds = org.gphash.OpKind.values();
            java.util.Set<Long> used = new java.util.HashSet<>();
            while (batch.size() < n) {
                long k = random.nextInt(keySpace);
                if (!used.add(k)) {
                    continue;
                }
                org.gphash.OpKind kind = random.nextDouble() < insertShare ? org.gphash.OpKind.INSERT
                        : kinds[random.nextInt(kinds.length)];
                byte[] v = kind.hasValue() ? value(k, ++version) : null;
                if (kind.isConditional()) {
                    byte[] expected = random.nextInt(4) > 0 && lastWritten.containsKey(k) ? lastWritten.get(k) : value(k, 0);
                    if (kind == org.gphash.OpKind.COMPARE_AND_SET) {
                        batch.compareAndSet(key(k, keySize), expected, v);
                    } else {
                        batch.compareAndDelete(key(k, keySize), expected);
                    }
                } else {
                    batch.add(kind, key(k, keySize), v);
                }
                if (v != null) {
                    lastWritten.put(k, v);
                }
            }
        }

        /** {@return a version for a value no earlier operation wrote} */
        public long nextVersion() {
            return ++version;
        }
    }

    /**
     * The kinds a batch holds without an expected value (the conditional ones are appended through
     * {@code compareAndSet} / {@code compareAndDelete}; DifferentialTest and ConditionalWritesGpuTest
     * run them).
     */
    public static final org.gphash.OpKind[] PLAIN_KINDS = java.util.Arrays.stream(org.gphash.OpKind.values())
            .filter(k -> !k.isConditional()).toArray(org.gphash.OpKind[]::new);

    /** Every operation of {@code batch}: the same outcome in both results, and the same value where one is returned. */
    public static void assertSameResults(org.gphash.Batch batch, org.gphash.BatchResult expected, org.gphash.BatchResult actual,
                                  String where) {
        for (int i = 0; i < batch.size(); i++) {
            String what = where + " op " + i + " " + batch.kind(i);
            org.junit.jupiter.api.Assertions.assertEquals(expected.outcome(i), actual.outcome(i), what);
            if (expected.outcome(i) == org.gphash.Outcome.FOUND || expected.outcome(i) == org.gphash.Outcome.REPLACED) {
                org.junit.jupiter.api.Assertions.assertArrayEquals(expected.value(i), actual.value(i), what + ": value");
            }
        }
    }

    /**
     * A batch of {@code n} plain operations on keys {@code keyBase} to {@code keyBase + keySpace - 1},
     * of every plain kind or only {@code only} (when not null), values versioned on from
     * {@code version[0]}. Keys repeat only where {@code repeats}: without the index mirror a batch's
     * operations on one key run in no promised order, so tests that may run there ask for none.
     */
    public static org.gphash.Batch plainBatch(java.util.Random random, int n, int keySize, long keyBase, int keySpace,
                                              boolean repeats, org.gphash.OpKind only, long[] version) {
        org.gphash.Batch batch = org.gphash.Batch.create(keySize, VALUE_SIZE, n);
        java.util.Set<Long> used = new java.util.HashSet<>();
        while (batch.size() < n) {
            long k = keyBase + random.nextInt(keySpace);
            if (repeats || used.add(k)) {
                org.gphash.OpKind kind = only != null ? only : PLAIN_KINDS[random.nextInt(PLAIN_KINDS.length)];
                batch.add(kind, key(k, keySize), kind.hasValue() ? value(k, ++version[0]) : null);
            }
        }
        return batch;
    }

    /** A device batch's outcomes and values read against the CPU engine's result of the same batch. */
    public static void assertSameResults(org.gphash.Batch batch, org.gphash.BatchResult expected, DeviceBatch device,
                                         String where) {
        byte[] codes = device.downloadCodes();
        byte[] values = device.downloadValues().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        int vs = (int) (values.length / Math.max(1, batch.size()));
        for (int i = 0; i < batch.size(); i++) {
            String what = where + " op " + i + " " + batch.kind(i);
            org.junit.jupiter.api.Assertions.assertEquals(expected.outcome(i), org.gphash.Outcome.ofCode(codes[i]), what);
            if (expected.outcome(i) == org.gphash.Outcome.FOUND || expected.outcome(i) == org.gphash.Outcome.REPLACED) {
                org.junit.jupiter.api.Assertions.assertArrayEquals(expected.value(i),
                        java.util.Arrays.copyOfRange(values, i * vs, (i + 1) * vs), what + ": value");
            }
        }
    }

    /** Key {@code k} as {@code keySize} bytes (little-endian number, then a pattern for longer keys). */
    public static byte[] key(long k, int keySize) {
        if (keySize < 8) {
            throw new IllegalArgumentException("keys of at least 8 bytes");
        }
        byte[] b = new byte[keySize];
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(0, k & 0xFFFFFFFFFFFFL);
        for (int i = 8; i < keySize; i++) {
            b[i] = (byte) (k * 31 + i);
        }
        return b;
    }

    /** A value naming its key and a version, with a checksum: a torn value does not decode. */
    public static byte[] value(long k, long version) {
        ByteBuffer b = ByteBuffer.allocate(VALUE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(k).putLong(version);
        long x = k * 0x9E3779B97F4A7C15L ^ version;
        while (b.remaining() > 8) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            b.putLong(x);
        }
        b.putLong(checksum(b.array()));
        return b.array();
    }

    public static long checksum(byte[] v) {
        long h = 1125899906842597L;
        for (int i = 0; i < VALUE_SIZE - 8; i++) {
            h = 31 * h + v[i];
        }
        return h;
    }

    public static boolean whole(byte[] v) {
        return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong(VALUE_SIZE - 8) == checksum(v);
    }

    public static long versionOf(byte[] v) {
        return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong(8);
    }

    public static long keyOf(byte[] v) {
        return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }

    @Override
    public void close() {
        pools.close();
    }
}
