package org.gphash.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.Journaling;
import org.gphash.Outcome;

/**
 * Model-based properties of a journaled CPU index against a plain map: random single calls and
 * batches (every kind of write, conditional ones included), checkpoints, syncs, clean reopens,
 * reboots (the pool is there but from an earlier boot, so it is rebuilt) and power cuts (the pool is
 * gone and the journal loses what was not forced). After each open the index must hold exactly the
 * model's entries: with a flush per call, every acknowledged write; flushed never, the entries of
 * some point between the last sync or checkpoint and the last write, with nothing torn. On a pool of
 * format 3 the values have random lengths from 0 to the value size, which every open must give back
 * (the journal's records and checkpoints keep each length; a rebuild makes a format 3 pool though
 * the builder that opens names no format).
 */
class JournalModelProperties {

    private static final int KEYS = 24;
    private static final int VALUE = 16;

    @Property(tries = 60)
    void flushedPerCallLosesNothingAcknowledged(@ForAll @Size(max = 90) List<@IntRange(min = 0, max = 1 << 30) Integer> script) throws IOException {
        run(script, Journaling.Flush.PER_CALL, 2);
    }

    @Property(tries = 40)
    void flushedNeverComesBackAtAPointAfterTheLastSync(@ForAll @Size(max = 90) List<@IntRange(min = 0, max = 1 << 30) Integer> script) throws IOException {
        run(script, Journaling.Flush.NEVER, 2);
    }

    @Property(tries = 60)
    void valuesOfAnyLengthFlushedPerCallComeBackAtTheirLengths(@ForAll @Size(max = 90) List<@IntRange(min = 0, max = 1 << 30) Integer> script) throws IOException {
        run(script, Journaling.Flush.PER_CALL, 3);
    }

    @Property(tries = 40)
    void valuesOfAnyLengthFlushedNeverComeBackAtAPointAfterTheLastSync(@ForAll @Size(max = 90) List<@IntRange(min = 0, max = 1 << 30) Integer> script) throws IOException {
        run(script, Journaling.Flush.NEVER, 3);
    }

    private static void run(List<Integer> script, Journaling.Flush flush, int format) throws IOException {
        Path root = Files.createTempDirectory(Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm")
                : Path.of(System.getProperty("java.io.tmpdir")), "gphash-jprop");
        Path journalDir = Files.createTempDirectory("gphash-journal");
        Path pool = root.resolve("p.pool");
        PowerCut.reset();
        Journaling settings = Journaling.in(journalDir.resolve("j")).checkpointEvery(java.time.Duration.ZERO).segmentBytes(1 << 20);
        settings = switch (flush) {
            case PER_CALL -> settings;
            case NEVER -> settings.flushNever();
            case INTERVAL -> settings.flushEvery(java.time.Duration.ofMillis(5));
        };
        Journaling j = settings;
        // Opens name no format: a pool rebuilt from the journal must come back in the format it was made in.
        java.util.function.Supplier<GPHashIndex.Builder> builder = () -> GPHashIndex.builder(pool).keySize(8).valueSize(VALUE)
                .initialCapacity(16).journal(j);
        Map<Long, byte[]> model = new HashMap<>();
        // For a journal flushed never: the model after every write since the last point that forced it.
        List<Map<Long, byte[]>> since = new ArrayList<>();
        since.add(new HashMap<>(model));
        GPHashIndex index = builder.get().poolFormat(format).create();
        Random random = new Random(script.hashCode());
        try {
            int step = 0;
            for (int x : script) {
                step++;
                long key = (x >>> 5) % KEYS;
                byte[] value = value(x, step, format);
                switch (x % 32) {
                    case 0 -> {
                        index.checkpoint();
                        forced(since, model);
                    }
                    case 1 -> {
                        index.sync();
                        forced(since, model);
                    }
                    case 2 -> {
                        index.close();
                        index = builder.get().open();
                        assertEquals(model.size(), check(index, model).size());
                        forced(since, model);
                    }
                    case 3, 4 -> {
                        PowerCut.cut(index, pool, j.directory(), x % 32 == 4 ? random : null);
                        index = builder.get().open();
                        assertTrue(index.lastRecovery().journal().rebuilt(), index.lastRecovery().toString());
                        assertEquals(format == 3, index.valueLengths(), "the rebuilt pool's values have any length");
                        model = restoredFrom(index, since, flush);
                        forced(since, model);
                    }
                    case 5 -> {
                        // A reboot: the pool file is still there, but from an earlier boot.
                        index.close();
                        System.setProperty("gphash.bootId", "boot-" + step);
                        try {
                            index = builder.get().open();
                        } finally {
                            System.clearProperty("gphash.bootId");
                        }
                        assertTrue(index.lastRecovery().journal().rebuilt(), index.lastRecovery().toString());
                        check(index, model);
                        index.close();
                        index = builder.get().open();   // the boot changed back: rebuilt again, same entries
                        check(index, model);
                        forced(since, model);
                    }
                    case 6, 7, 8 -> {
                        Batch batch = index.newBatch(8);
                        Map<Long, byte[]> after = new HashMap<>(model);
                        List<Runnable> checks = new ArrayList<>();
                        int n = 1 + x % 7;
                        for (int i = 0; i < n; i++) {
                            long k = (key + i * 7L) % KEYS;
                            byte[] v = value(x + i, step * 31 + i, format);
                            switch ((x >>> (i + 2)) % 4) {
                                case 0 -> {
                                    batch.put(k, v);
                                    after.put(k, v);
                                }
                                case 1 -> {
                                    batch.delete(k);
                                    after.remove(k);
                                }
                                case 2 -> {
                                    batch.insert(k, v);
                                    after.putIfAbsent(k, v);
                                }
                                default -> {
                                    batch.update(k, v);
                                    after.computeIfPresent(k, (kk, old) -> v);
                                }
                            }
                        }
                        BatchResult r = new BatchResult(VALUE, n);
                        index.execute(batch, r);
                        for (int i = 0; i < n; i++) {
                            assertTrue(r.outcome(i) != Outcome.NOT_APPLIED);
                        }
                        model = after;
                        since.add(new HashMap<>(model));
                    }
                    case 9 -> {
                        byte[] old = model.get(key);
                        byte[] expected = old != null && (x & 64) != 0 ? old : value(x + 1, step, format);
                        boolean swapped = index.compareAndSet(key, expected, value);
                        assertEquals(old != null && Arrays.equals(old, expected), swapped);
                        if (swapped) {
                            model.put(key, value);
                        }
                        since.add(new HashMap<>(model));
                    }
                    case 10, 11, 12 -> {
                        boolean present = index.delete(key);
                        assertEquals(model.remove(key) != null, present);
                        since.add(new HashMap<>(model));
                    }
                    case 13, 14 -> {
                        boolean inserted = index.insert(key, value);
                        assertEquals(!model.containsKey(key), inserted);
                        model.putIfAbsent(key, value);
                        since.add(new HashMap<>(model));
                    }
                    default -> {
                        index.put(key, value);
                        model.put(key, value);
                        since.add(new HashMap<>(model));
                    }
                }
            }
            PowerCut.cut(index, pool, j.directory(), random);
            index = builder.get().open();
            restoredFrom(index, since, flush);
        } finally {
            index.close();
            deleteTree(root);
            deleteTree(journalDir);
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var files = Files.walk(dir)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    /** The journal was forced: only the model as it is now can come back. */
    private static void forced(List<Map<Long, byte[]>> since, Map<Long, byte[]> model) {
        since.clear();
        since.add(new HashMap<>(model));
    }

    /** Checks the rebuilt index against what may have survived; returns the model it matched. */
    private static Map<Long, byte[]> restoredFrom(GPHashIndex index, List<Map<Long, byte[]>> since, Journaling.Flush flush) {
        Map<Long, byte[]> now = contents(index);
        if (flush == Journaling.Flush.PER_CALL) {
            Map<Long, byte[]> last = since.get(since.size() - 1);
            assertSame(last, now, index);
            return last;
        }
        for (int i = since.size() - 1; i >= 0; i--) {
            if (same(since.get(i), now)) {
                return since.get(i);
            }
        }
        throw new AssertionError("the rebuilt index holds " + now.size() + " entries, matching no point after the last "
                + "forced one (" + since.size() + " points); " + index.lastRecovery());
    }

    private static Map<Long, byte[]> check(GPHashIndex index, Map<Long, byte[]> model) {
        Map<Long, byte[]> now = contents(index);
        assertSame(model, now, index);
        return now;
    }

    private static void assertSame(Map<Long, byte[]> expected, Map<Long, byte[]> actual, GPHashIndex index) {
        if (!same(expected, actual)) {
            throw new AssertionError("expected " + expected.size() + " entries, found " + actual.size() + "; "
                    + index.lastRecovery());
        }
    }

    private static boolean same(Map<Long, byte[]> a, Map<Long, byte[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (Map.Entry<Long, byte[]> e : a.entrySet()) {
            if (!Arrays.equals(e.getValue(), b.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    private static Map<Long, byte[]> contents(GPHashIndex index) {
        Map<Long, byte[]> out = new HashMap<>();
        for (long k = 0; k < KEYS; k++) {
            byte[] v = index.get(k);
            if (v != null) {
                out.put(k, v);
            }
        }
        return out;
    }

    /** A value of the value size, or in format 3 of a length from 0 to it. */
    private static byte[] value(int x, int step, int format) {
        byte[] v = new byte[VALUE];
        java.nio.ByteBuffer.wrap(v).putInt(x).putInt(step).putLong(x * 31L + step);
        return format == 3 ? Arrays.copyOf(v, Math.floorMod(x * 7 + step, VALUE + 1)) : v;
    }
}
