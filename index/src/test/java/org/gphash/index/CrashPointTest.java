package org.gphash.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.stream.Stream;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.gphash.index.api.TestPools;
import org.gphash.spi.CrashHook;
import org.gphash.spi.CrashPoint;
import org.gphash.table.Probe;
import org.gphash.table.Slots;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Stops operations at each of their persist points, drops all volatile state (the engine is
 * abandoned: no clean shutdown, nothing more written), reopens the pool and checks what a crash
 * there leaves: a sound pool (no INSERT slot, no torn item, no duplicate, no shared or leaked value
 * block), every completed operation visible, the interrupted one wholly present or wholly absent,
 * and no value that was never written.
 *
 * <p>One deterministic single-threaded workload (inserts, puts, updates, deletes over a pool that
 * starts tiny, so that it resizes and grows its heap many times, with planted duplicates) reaches
 * every {@link CrashPoint}; each case crashes it at the k-th time one point is reached.
 */
class CrashPointTest {

    private static final int VALUE_SIZE = 128;
    private static final int OPERATIONS = 1500;
    private static final int PRELOAD = 40;

    private final TestPools pools = TestPools.create();
    /** The pool format the test's pools are made in (issue 53: every crash point in format 3 too). */
    private int format = 2;

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    /** Thrown by the armed hook: unwinds the engine mid-operation, like a crash would stop it. */
    static final class SimulatedCrash extends Error {
        private static final long serialVersionUID = 1L;

        SimulatedCrash(CrashPoint point) {
            super("simulated crash at " + point, null, false, false);
        }
    }

    /** Counts points and, when armed, throws at the k-th arrival at the target. */
    static final class ArmedHook implements CrashHook {
        final EnumMap<CrashPoint, Integer> counts = new EnumMap<>(CrashPoint.class);
        CrashPoint target;
        int countdown;

        @Override
        public void reached(CrashPoint point) {
            counts.merge(point, 1, Integer::sum);
            if (point == target && --countdown == 0) {
                target = null;
                throw new SimulatedCrash(point);
            }
        }

        /** Crashes at the {@code k}-th {@code point} from now; the counts start again (what the preparation reached is not the workload's). */
        void arm(CrashPoint point, int k) {
            counts.clear();
            target = point;
            countdown = k;
        }
    }

    enum Kind { INSERT, PUT, UPDATE, DELETE }

    record Op(Kind kind, long key, long version) {
    }

    /** A value that names its key and version and carries a checksum, so a torn or foreign value shows. */
    static byte[] value(long key, long version) {
        ByteBuffer b = ByteBuffer.allocate(VALUE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(key).putLong(version);
        long x = key * 31 + version;
        while (b.remaining() > 8) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            b.put((byte) (x >>> 56));
        }
        b.putLong(Arrays.hashCode(Arrays.copyOf(b.array(), VALUE_SIZE - 8)));
        return b.array();
    }

    static MemorySegment key(long k) {
        MemorySegment s = MemorySegment.ofArray(new byte[8]);
        s.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 0, k);
        return s;
    }

    static List<Op> workload() {
        Random r = new Random(42);
        List<Op> ops = new ArrayList<>();
        List<Long> live = new ArrayList<>();
        for (long k = 0; k < PRELOAD; k++) {
            live.add(k);
        }
        long next = PRELOAD;
        for (int i = 0; i < OPERATIONS; i++) {
            int dice = r.nextInt(100);
            long version = i + 1;
            if (dice < 55 || live.isEmpty()) {
                ops.add(new Op(dice % 2 == 0 ? Kind.INSERT : Kind.PUT, next, version));
                live.add(next++);
            } else if (dice < 85) {
                long k = live.get(r.nextInt(live.size()));
                ops.add(new Op(dice % 2 == 0 ? Kind.UPDATE : Kind.PUT, k, version));
            } else {
                long k = live.remove(r.nextInt(live.size()));
                ops.add(new Op(Kind.DELETE, k, version));
            }
        }
        return ops;
    }

    private GPHashConfig config(Path path, CrashHook hook) {
        GPHashConfig c = Configs.of(path, 8, VALUE_SIZE, 0, 0, 0, 16, Long.MAX_VALUE, Backend.CPU, false, OptionalLong.of(7),
                hook, BktCacheConfig.DISABLED);
        return format == 2 ? c : GPHashIndex.from(c).poolFormat(format).config();
    }

    /** Creates the pool, preloads keys and plants duplicates of a few of them. */
    private CpuEngine prepare(Path path, ArmedHook hook, Map<Long, Long> model) {
        return prepare(path, hook, model, true);
    }

    /**
     * As {@link #prepare(Path, ArmedHook, Map)}; without {@code plant}, no duplicates (which stand for
     * racing inserts still in flight, and so cannot outlive a clean close).
     */
    private CpuEngine prepare(Path path, ArmedHook hook, Map<Long, Long> model, boolean plant) {
        CpuEngine engine = CpuEngine.create(config(path, hook));
        for (long k = 0; k < PRELOAD; k++) {
            assertEquals(Outcome.INSERTED, engine.insert(key(k), MemorySegment.ofArray(value(k, 0))));
            model.put(k, 0L);
        }
        if (!plant) {
            return engine;
        }
        int planted = 0;
        for (long k = 0; k < PRELOAD && planted < 8; k++) {
            if (plantDuplicate(engine.table(), k, value(k, 0))) {
                planted++;
            }
        }
        assertTrue(planted > 0, "could not plant any duplicate");
        // Each planted duplicate stands for an insert that raced another and had not yet removed its
        // copy: as many writers as that must have been admitted (the header's in-flight bound).
        engine.table().table.headers.admitOpsInFlight(planted + 1);
        return engine;
    }

    /** Writes a second, less valid copy of {@code k} into a later candidate bucket, as a racing insert could. */
    static boolean plantDuplicate(CpuTable table, long k, byte[] value) {
        MemorySegment pool = table.table.file.segment();
        Probe probe = table.table.newProbe();
        MemorySegment key = key(k);
        probe.hash(key, 0);
        probe.scan(pool, table.layout(), key, 0);
        assertEquals(1, probe.matchCount);
        long valid = probe.matchSlot[0];
        long target = -1;
        boolean afterValid = false;
        for (int b = 0; b < probe.bucketCount && target < 0; b++) {
            long start = probe.bucketOffset[b];
            if (valid >= start && valid < start + table.table.geometry.bucketSize()) {
                afterValid = true;
                continue;
            }
            if (afterValid && probe.bucketFirstEmpty[b] >= 0) {
                target = probe.bucketFirstEmpty[b];
            }
        }
        if (target < 0) {
            return false;
        }
        int c = table.table.fullClass;
        long block = table.table.blocks.allocate(c, 0);
        table.table.values.write(pool, block, MemorySegment.ofArray(value), 0, value.length);
        MemorySegment.copy(key, 0, pool, target + SlotMeta.BYTES, 8);
        Slots.setMeta(pool, target, table.table.meta.make(probe.fingerprint, c, block));
        table.table.size.increment();
        return true;
    }

    private static Outcome apply(CpuEngine engine, Op op) {
        MemorySegment v = MemorySegment.ofArray(value(op.key(), op.version()));
        return switch (op.kind()) {
            case INSERT -> engine.insert(key(op.key()), v);
            case PUT -> engine.put(key(op.key()), v);
            case UPDATE -> engine.update(key(op.key()), v);
            case DELETE -> engine.delete(key(op.key()));
        };
    }

    private static void applyToModel(Map<Long, Long> model, Op op) {
        switch (op.kind()) {
            case INSERT -> model.putIfAbsent(op.key(), op.version());
            case PUT -> model.put(op.key(), op.version());
            case UPDATE -> model.computeIfPresent(op.key(), (k, v) -> op.version());
            case DELETE -> model.remove(op.key());
        }
    }

    @ParameterizedTest(name = "format {0}")
    @ValueSource(ints = {2, 3})
    void theWorkloadReachesEveryPersistPoint(int poolFormat) {
        format = poolFormat;
        ArmedHook hook = new ArmedHook();
        Map<Long, Long> model = new HashMap<>();
        try (CpuEngine engine = prepare(pools.pool("count.pool"), hook, model)) {
            for (Op op : workload()) {
                apply(engine, op);
                applyToModel(model, op);
            }
            assertTrue(engine.verify().sound(), engine.verify().toString());
            assertEquals(model.size(), engine.stats().size());
        }
        for (CrashPoint p : CrashPoint.values()) {
            assertTrue(hook.counts.getOrDefault(p, 0) > 0, "workload never reaches " + p + ": " + hook.counts);
        }
    }

    static Stream<Arguments> crashCases() {
        List<Arguments> cases = new ArrayList<>();
        for (int format : new int[] {2, 3}) {
            for (CrashPoint p : CrashPoint.values()) {
                for (int k : new int[] {1, 2, 7}) {
                    cases.add(Arguments.of(p, k, format));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "crash at {0} #{1}, format {2}")
    @MethodSource("crashCases")
    void crashAtPersistPoint(CrashPoint point, int k, int poolFormat) {
        format = poolFormat;
        Path path = pools.pool("crash.pool");
        ArmedHook hook = new ArmedHook();
        Map<Long, Long> model = new HashMap<>();
        CpuEngine engine = prepare(path, hook, model);
        Op inFlight = crashSomewhere(engine, hook, point, k, model);
        if (inFlight == null) {
            engine.close();
            assertTrue(hook.counts.getOrDefault(point, 0) < k, point + " reached but no crash");
            return;
        }
        checkRecovered(path, model, inFlight);
    }

    /** Runs the workload with the hook armed; returns the interrupted operation, or null if none was. */
    private static Op crashSomewhere(CpuEngine engine, ArmedHook hook, CrashPoint point, int k, Map<Long, Long> model) {
        hook.arm(point, k);
        for (Op op : workload()) {
            try {
                apply(engine, op);
            } catch (SimulatedCrash crash) {
                engine.abandon();
                return op;
            }
            applyToModel(model, op);
        }
        return null;
    }

    /** Reopens after a crash and checks the pool against the model of completed operations. */
    static void checkRecovered(Path path, Map<Long, Long> model, Op inFlight) {
        checkRecovered(path, model, inFlight, true);
    }

    static void checkRecovered(Path path, Map<Long, Long> model, Op inFlight, boolean crashedInOperation) {
        try (CpuEngine reopened = CpuEngine.open(Configs.of(path, 8, VALUE_SIZE, 0, 0, 0, 16, Long.MAX_VALUE,
                Backend.CPU, false, OptionalLong.empty(), CrashHook.NONE, BktCacheConfig.DISABLED))) {
            RecoveryReport report = reopened.lastRecovery();
            if (crashedInOperation) {
                assertFalse(report.previousShutdownClean(), report.toString());
            }
            VerifyReport verify = reopened.verify();
            assertTrue(verify.sound(), "after crash in " + inFlight + ": " + verify + " / " + report);
            long expectedSize = 0;
            byte[] out = new byte[VALUE_SIZE];
            for (Map.Entry<Long, Long> e : model.entrySet()) {
                if (e.getKey() == inFlight.key()) {
                    continue;
                }
                assertEquals(Outcome.FOUND, reopened.get(key(e.getKey()), MemorySegment.ofArray(out)), "lost key " + e.getKey());
                assertArrayEquals(value(e.getKey(), e.getValue()), out, "wrong value for key " + e.getKey());
                expectedSize++;
            }
            // The interrupted operation: wholly applied or not at all.
            Long before = model.get(inFlight.key());
            Map<Long, Long> after = new HashMap<>(model);
            applyToModel(after, inFlight);
            Long applied = after.get(inFlight.key());
            Outcome o = reopened.get(key(inFlight.key()), MemorySegment.ofArray(out));
            if (o == Outcome.FOUND) {
                boolean isBefore = before != null && Arrays.equals(out, value(inFlight.key(), before));
                boolean isAfter = applied != null && Arrays.equals(out, value(inFlight.key(), applied));
                assertTrue(isBefore || isAfter, "interrupted " + inFlight + " left a value that is neither before nor after");
                expectedSize++;
            } else {
                assertTrue(before == null || applied == null, "interrupted " + inFlight + " lost the key");
            }
            assertEquals(expectedSize, reopened.stats().size(), "size after recovery");
            assertEquals(expectedSize, verify.items());
        }
        // Recovery left nothing to repair for the next open.
        try (CpuEngine again = CpuEngine.open(Configs.of(path, 0, 0, 0, 0, 0, 16, Long.MAX_VALUE, Backend.CPU, false,
                OptionalLong.empty(), CrashHook.NONE, BktCacheConfig.DISABLED))) {
            RecoveryReport second = again.lastRecovery();
            assertTrue(second.previousShutdownClean());
            assertFalse(second.repairedAnything(), second.toString());
        }
    }

    @ParameterizedTest(name = "second crash at {0}")
    @org.junit.jupiter.params.provider.EnumSource(value = CrashPoint.class,
            names = {"RESIZE_REHASHED", "HEADER_FIRST_COPY_WRITTEN", "RESIZE_COMMITTED"})
    void crashDuringRecoveryOfAResizeIsRecoveredByTheNextOpen(CrashPoint secondCrash) {
        Path path = pools.pool("double.pool");
        ArmedHook hook = new ArmedHook();
        Map<Long, Long> model = new HashMap<>();
        CpuEngine engine = prepare(path, hook, model);
        Op inFlight = crashSomewhere(engine, hook, CrashPoint.RESIZE_ITEM_COPIED, 3, model);
        assertNotNull(inFlight);
        ArmedHook second = new ArmedHook();
        second.arm(secondCrash, 1);
        try {
            CpuEngine.open(Configs.of(path, 8, VALUE_SIZE, 0, 0, 0, 16, Long.MAX_VALUE, Backend.CPU, false,
                    OptionalLong.empty(), second, BktCacheConfig.DISABLED)).close();
            fail("the resumed resize should have crashed at " + secondCrash);
        } catch (SimulatedCrash expected) {
            // the open was interrupted in the middle of the resumed resize
        }
        checkRecovered(path, model, inFlight);
    }

    @Test
    void aTornNewestHeaderCopyFallsBackToTheOlderOne() throws IOException {
        for (int k = 1; k <= 6; k++) {
            Path path = pools.pool("torn" + k + ".pool");
            ArmedHook hook = new ArmedHook();
            Map<Long, Long> model = new HashMap<>();
            CpuEngine engine = prepare(path, hook, model);
            Op inFlight = crashSomewhere(engine, hook, CrashPoint.HEADER_FIRST_COPY_WRITTEN, k, model);
            assertNotNull(inFlight);
            tearNewestHeaderCopy(path);
            checkRecovered(path, model, inFlight);
        }
    }

    @Test
    void crashWhileClosingLosesNothing() {
        Path path = pools.pool("close.pool");
        ArmedHook hook = new ArmedHook();
        Map<Long, Long> model = new HashMap<>();
        CpuEngine engine = prepare(path, hook, model, false);
        hook.arm(CrashPoint.HEADER_FIRST_COPY_WRITTEN, 1);
        try {
            engine.close();
            fail("close should have crashed");
        } catch (SimulatedCrash expected) {
            engine.abandon();
        }
        // Nothing was in flight: every key must be intact. Key -1 stands for "no operation". Whether
        // the pool reads as cleanly shut down depends on whether the first header copy made it.
        checkRecovered(path, model, new Op(Kind.UPDATE, -1, 0), false);
    }

    /** Damages the copy with the higher sequence number, as a write torn by a power cut would. */
    static void tearNewestHeaderCopy(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer a = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(a, PoolHeader.OFF_SEQUENCE);
            ch.read(b, PoolHeader.COPY_BYTES + PoolHeader.OFF_SEQUENCE);
            long base = a.getLong(0) > b.getLong(0) ? 0 : PoolHeader.COPY_BYTES;
            ch.write(ByteBuffer.wrap(new byte[] {(byte) 0xA5, 0x5A, 0x00, (byte) 0xFF}), base + 200);
        }
    }
}
