package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashConfig;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.index.CpuEngine;
import org.gphash.spi.CrashPoint;
import org.gphash.spi.Engine;
import org.gphash.table.VerifyReport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** One pool format: what one engine writes, the other opens, recovers and reads. */
class CrossEngineTest {

    @BeforeEach
    void gpu() {
        GpuTestSupport.assumeGpu();
    }

    /** Thrown by a crash hook to stop the CPU engine at a persist point, as a crash would. */
    static final class Crash extends RuntimeException {
        Crash() {
            super("simulated crash", null, false, false);
        }
    }

    @Test
    void gpuWrittenPoolOpensOnTheCpuAndBack() {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path path = t.pool("p");
            Map<Long, byte[]> model = new HashMap<>();
            Random random = new Random(31);
            try (GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(path, Backend.GPU, 8, 2, 2, 8, 256, 31))) {
                apply(gpu, model, random, 30_000, 1);
                assertTrue(gpu.stats().resizes() > 0);
            }
            try (CpuEngine cpu = CpuEngine.open(GpuTestSupport.config(path, Backend.CPU, 8, 2, 2, 8, 256, 31))) {
                assertTrue(cpu.lastRecovery().previousShutdownClean());
                assertFalse(cpu.lastRecovery().repairedAnything(), cpu.lastRecovery().toString());
                VerifyReport report = cpu.verify();
                assertTrue(report.sound(), report.toString());
                assertContents(cpu, model);
                apply(cpu, model, random, 30_000, 2);
            }
            try (GpuEngine gpu = GpuEngines.open(GpuTestSupport.config(path, Backend.GPU, 8, 2, 2, 8, 256, 31))) {
                RecoveryReport r = gpu.lastRecovery();
                assertTrue(r.previousShutdownClean());
                assertFalse(r.repairedAnything(), r.toString());
                assertEquals(model.size(), r.items());
                assertEquals(model.size(), r.valueBlocksInUse());
                assertContents(gpu, model);
            }
        }
    }

    @Test
    void gpuRecoversACpuCrashInTheMiddleOfAResize() {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path path = t.pool("p");
            Map<Long, byte[]> model = new HashMap<>();
            int[] countdown = {-1};
            GPHashConfig cpuConfig = GpuTestSupport.inTestFormat(GPHashIndex.builder(path)).keySize(8).valueSize(GpuTestSupport.VALUE_SIZE)
                    .initialCapacity(256).seed(41).config().withCrashHook(point -> {
                        if (point == CrashPoint.RESIZE_ITEM_MOVED && countdown[0] >= 0 && countdown[0]-- == 0) {
                            throw new Crash();
                        }
                    });
            CpuEngine cpu = CpuEngine.create(cpuConfig);
            long k = 0;
            Outcome last;
            try {
                for (;; k++) {
                    if (k == 600) {
                        countdown[0] = 1;  // crash in the second batch of a resize's rehash
                    }
                    byte[] v = value(k, 1);
                    last = cpu.put(java.lang.foreign.MemorySegment.ofArray(key(k, 8)), java.lang.foreign.MemorySegment.ofArray(v));
                    assertEquals(Outcome.INSERTED, last);
                    model.put(k, v);
                    if (k > 200_000) {
                        throw new AssertionError("no resize reached the crash point");
                    }
                }
            } catch (Crash expected) {
                cpu.abandon();
            }
            // The interrupted put may or may not have happened; it is key k.
            try (GpuEngine gpu = GpuEngines.open(GpuTestSupport.config(path, Backend.GPU, 8, 2, 2, 8, 256, 41))) {
                RecoveryReport r = gpu.lastRecovery();
                assertFalse(r.previousShutdownClean());
                assertTrue(r.resizeResumed(), r.toString());
                byte[] interrupted = get(gpu, k);
                if (interrupted != null) {
                    model.put(k, interrupted);
                }
                assertContents(gpu, model);
                VerifyReport report = gpu.diagnostics().verify();
                assertTrue(report.sound(), report.toString());
                assertEquals(model.size(), report.items());
            }
        }
    }

    @Test
    void gpuClearsAHalfDoneInsert() {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path path = t.pool("p");
            boolean[] armed = {false};
            GPHashConfig cpuConfig = GpuTestSupport.inTestFormat(GPHashIndex.builder(path)).keySize(8).valueSize(GpuTestSupport.VALUE_SIZE)
                    .initialCapacity(1024).seed(51).config().withCrashHook(point -> {
                        if (armed[0] && point == CrashPoint.INSERT_ITEM_PERSISTED) {
                            throw new Crash();
                        }
                    });
            CpuEngine cpu = CpuEngine.create(cpuConfig);
            for (long k = 0; k < 100; k++) {
                cpu.insert(java.lang.foreign.MemorySegment.ofArray(key(k, 8)), java.lang.foreign.MemorySegment.ofArray(value(k, 1)));
            }
            armed[0] = true;
            assertThrows(Crash.class, () -> cpu.insert(java.lang.foreign.MemorySegment.ofArray(key(100, 8)),
                    java.lang.foreign.MemorySegment.ofArray(value(100, 1))));
            cpu.abandon();
            try (GpuEngine gpu = GpuEngines.open(GpuTestSupport.config(path, Backend.GPU, 8, 2, 2, 8, 1024, 51))) {
                RecoveryReport r = gpu.lastRecovery();
                assertEquals(1, r.insertSlotsCleared(), r.toString());
                assertEquals(100, r.items());
                assertEquals(null, get(gpu, 100));
                assertTrue(gpu.diagnostics().verify().sound());
            }
        }
    }

    /**
     * Issue 14: the GPU's recovery kernels judge before they write. An item whose key no longer
     * matches its fingerprint (a flipped bit, which no crash leaves) makes open refuse the pool and
     * change nothing; asked to repair, the GPU clears that item alone. An INSERT slot next to it is
     * not cleared by the refused open either.
     */
    @Test
    void gpuRefusesDamageBeyondACrashAndChangesNothing() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path path = t.pool("p");
            try (CpuEngine cpu = CpuEngine.create(GpuTestSupport.config(path, Backend.CPU, 8, 2, 2, 8, 1024, 61))) {
                for (long k = 0; k < 500; k++) {
                    cpu.insert(java.lang.foreign.MemorySegment.ofArray(key(k, 8)),
                            java.lang.foreign.MemorySegment.ofArray(value(k, 1)));
                }
            }
            long flipped;
            long free;
            try (org.gphash.table.PoolInspector in = org.gphash.table.PoolInspector.open(path)) {
                org.gphash.table.TableLayout layout = in.layout();
                long slot = layout.levelOffset(0);
                long slotBytes = in.geometry().slotSize();
                while (!org.gphash.format.SlotMeta.isItem(in.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, slot))) {
                    slot += slotBytes;
                }
                flipped = slot;
                free = layout.levelOffset(0);
                while (in.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, free) != 0) {
                    free += slotBytes;
                }
            }
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(path,
                    java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
                java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
                ch.read(b, flipped + 8 + 3);
                b.put(0, (byte) (b.get(0) ^ 0x10)).rewind();
                ch.write(b, flipped + 8 + 3);
                ch.write(java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder())
                        .putLong(0, org.gphash.format.SlotMeta.INSERT), free);
            }
            byte[] before = java.nio.file.Files.readAllBytes(path);
            // The pool was closed cleanly: only a scanning open (not the close record) judges the slots.
            org.gphash.error.PoolFormatException e = assertThrows(org.gphash.error.PoolFormatException.class,
                    () -> GpuEngines.open(GpuTestSupport.config(path, Backend.GPU, 8, 2, 2, 8, 1024, 61)
                            .withVerifyOnOpen(true)).close());
            assertEquals(org.gphash.error.PoolFormatException.Reason.DAMAGE_BEYOND_CRASH, e.reason(), e.getMessage());
            assertArrayEquals(before, java.nio.file.Files.readAllBytes(path), "the refused GPU open wrote to the pool");
            try (GpuEngine gpu = GpuEngines.open(GpuTestSupport.config(path, Backend.GPU, 8, 2, 2, 8, 1024, 61)
                    .withRepairBeyondCrash(true))) {
                RecoveryReport r = gpu.lastRecovery();
                assertEquals(1, r.tornSlotsCleared(), r.toString());
                assertEquals(1, r.insertSlotsCleared(), r.toString());
                assertEquals(499, r.items(), r.toString());
                assertTrue(gpu.diagnostics().verify().sound());
            }
        }
    }

    /** A pool with item checksums (CPU engine only) is refused by the GPU engine before anything is written. */
    @Test
    void gpuRefusesAPoolWithItemChecksums() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path path = t.pool("p");
            try (GPHashIndex cpu = GPHashIndex.builder(path).keySize(8).valueSize(GpuTestSupport.VALUE_SIZE)
                    .initialCapacity(1024).itemChecksums(true).create()) {
                cpu.put(1L, value(1, 1));
            }
            byte[] before = java.nio.file.Files.readAllBytes(path);
            org.gphash.BackendUnavailableException e = assertThrows(org.gphash.BackendUnavailableException.class,
                    () -> GPHashIndex.builder(path).backend(Backend.GPU).open().close());
            assertTrue(e.getMessage().contains("item checksums"), e.getMessage());
            assertArrayEquals(before, java.nio.file.Files.readAllBytes(path));
        }
    }

    /** Issue 13: the cursor and a snapshot of an open pool on the GPU engine (read on the host between batches). */
    @Test
    void gpuCursorAndSnapshotSeeWhatTheBatchesWrote() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path path = t.pool("p");
            Path copy = t.pool("copy");
            Map<Long, byte[]> model = new HashMap<>();
            try (GPHashIndex gpu = GpuTestSupport.inTestFormat(GPHashIndex.builder(path)).backend(Backend.GPU).keySize(8)
                    .valueSize(GpuTestSupport.VALUE_SIZE).initialCapacity(256).seed(71).create()) {
                apply(gpu.engine(), model, new Random(71), 30_000, 1);
                Map<Long, byte[]> seen = new HashMap<>();
                try (org.gphash.Cursor c = gpu.cursor()) {
                    while (c.next()) {
                        assertEquals(null, seen.put(c.longKey(), c.value()), "key " + c.longKey() + " twice");
                    }
                }
                assertEquals(model.keySet(), seen.keySet());
                model.forEach((k, v) -> assertArrayEquals(v, seen.get(k), "key " + k));
                gpu.snapshot(copy);
                apply(gpu.engine(), new HashMap<>(model), new Random(72), 1_000, 2);
            }
            try (GPHashIndex snap = GPHashIndex.builder(copy).open()) {
                assertEquals(model.size(), snap.size());
                model.forEach((k, v) -> assertArrayEquals(v, snap.get(k), "key " + k + " in the snapshot"));
            }
        }
    }

    /**
     * The GPU engine's close leaves a close record from the GPU's own heap bitmap: the next open
     * (either engine) trusts it, agrees with a scanning open, and writes more without clobbering.
     */
    @Test
    void gpuCloseRecordAgreesWithAScan() throws Exception {
        try (GpuTestSupport t = GpuTestSupport.create()) {
            Path path = t.pool("p");
            Map<Long, byte[]> model = new HashMap<>();
            try (GPHashIndex gpu = GpuTestSupport.inTestFormat(GPHashIndex.builder(path)).backend(Backend.GPU).keySize(8)
                    .valueSize(GpuTestSupport.VALUE_SIZE).initialCapacity(256).seed(73).create()) {
                apply(gpu.engine(), model, new Random(73), 20_000, 1);
                apply(gpu.engine(), model, new Random(74), 20_000, 2);
            }
            org.gphash.RecoveryReport fast;
            try (GPHashIndex gpu = GPHashIndex.builder(path).backend(Backend.GPU).open()) {
                fast = gpu.lastRecovery();
                assertTrue(fast.fromCloseRecord(), fast.toString());
                apply(gpu.engine(), model, new Random(75), 5_000, 3);
            }
            try (GPHashIndex cpu = GPHashIndex.builder(path).verifyOnOpen(true).open()) {
                org.gphash.RecoveryReport scanned = cpu.lastRecovery();
                assertEquals(false, scanned.repairedAnything(), scanned.toString());
                assertEquals(model.size(), scanned.items());
                model.forEach((k, v) -> assertArrayEquals(v, cpu.get(k), "key " + k));
            }
            try (GPHashIndex cpu = GPHashIndex.builder(path).open()) {
                org.gphash.RecoveryReport again = cpu.lastRecovery();
                assertTrue(again.fromCloseRecord(), again.toString());
                assertEquals(model.size(), again.items());
                assertEquals(again.items(), again.valueBlocksInUse(), "every item owns one block, no more");
            }
        }
    }

    static void apply(Engine e, Map<Long, byte[]> model, Random random, int ops, long version) {
        Batch batch = Batch.create(8, GpuTestSupport.VALUE_SIZE, ops);
        java.util.Set<Long> used = new java.util.HashSet<>();
        OpKind[] kinds = {OpKind.PUT, OpKind.PUT, OpKind.INSERT, OpKind.UPDATE, OpKind.DELETE};
        while (batch.size() < ops) {
            long k = random.nextInt(ops * 2);
            if (!used.add(k)) {
                continue;
            }
            OpKind kind = kinds[random.nextInt(kinds.length)];
            byte[] v = value(k, version);
            batch.add(kind, key(k, 8), kind.hasValue() ? v : null);
            switch (kind) {
                case PUT -> model.put(k, v);
                case INSERT -> model.putIfAbsent(k, v);
                case UPDATE -> model.computeIfPresent(k, (x, old) -> v);
                case DELETE -> model.remove(k);
                default -> throw new IllegalStateException();
            }
        }
        BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
        e.execute(batch, r);
    }

    static byte[] get(Engine e, long k) {
        Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, 1);
        b.get(key(k, 8));
        BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
        e.execute(b, r);
        return r.value(0);
    }

    static void assertContents(Engine e, Map<Long, byte[]> model) {
        Batch b = Batch.create(8, GpuTestSupport.VALUE_SIZE, model.size());
        Long[] keys = model.keySet().toArray(Long[]::new);
        for (long k : keys) {
            b.get(key(k, 8));
        }
        BatchResult r = new BatchResult(GpuTestSupport.VALUE_SIZE, 1);
        e.execute(b, r);
        for (int i = 0; i < keys.length; i++) {
            assertEquals(Outcome.FOUND, r.outcome(i), "key " + keys[i]);
            assertArrayEquals(model.get(keys[i]), r.value(i), "key " + keys[i]);
        }
        assertEquals(model.size(), e.stats().size());
    }
}
