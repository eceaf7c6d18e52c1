package org.gphash.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;

import org.gphash.Backend;
import org.gphash.error.PoolFormatException;
import org.gphash.format.PoolHeader;
import org.gphash.index.api.TestPools;
import org.gphash.spi.CrashHook;
import org.gphash.spi.CrashPoint;
import org.gphash.table.PoolInspector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 52, item 3: a header older than the table (both copies, from a saved copy of the pool's first
 * bytes) is refused, where before the scan found 56% of the items, freed the others' value blocks and
 * `check` called the pool sound. The table's levels carry stamps: a level a resize dropped says so,
 * and a level past the header's committed length that holds items shows the header is older.
 */
class StaleHeaderTest {

    private static final int VALUE_SIZE = 16;
    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    private static MemorySegment key(long k) {
        MemorySegment s = MemorySegment.ofArray(new byte[8]);
        s.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 0, k);
        return s;
    }

    private static MemorySegment value(long k) {
        MemorySegment s = MemorySegment.ofArray(new byte[VALUE_SIZE]);
        s.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 0, k * 7 + 1);
        return s;
    }

    private static org.gphash.GPHashConfig config(Path p, CrashHook hook) {
        return Configs.of(p, 8, VALUE_SIZE, 0, 0, 0, 64, Long.MAX_VALUE, Backend.CPU, false, OptionalLong.of(5), hook,
                org.gphash.bktcache.BktCacheConfig.DISABLED);
    }

    private static void putAll(CpuEngine engine, long from, long to) {
        for (long k = from; k < to; k++) {
            engine.put(key(k), value(k));
        }
    }

    private static byte[] headerRegion(Path p) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(PoolHeader.REGION_BYTES);
            ch.read(b, 0);
            return b.array();
        }
    }

    private static void restoreHeaderRegion(Path p, byte[] saved) throws IOException {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(saved), 0);
        }
    }

    @Test
    void aHeaderFromBeforeTheLastResizeIsRefused() throws IOException {
        Path p = pools.pool("old-header.pool");
        byte[] saved;
        try (CpuEngine engine = CpuEngine.create(config(p, CrashHook.NONE))) {
            putAll(engine, 0, 200);
        }
        saved = headerRegion(p);
        try (CpuEngine engine = CpuEngine.open(config(p, CrashHook.NONE))) {
            putAll(engine, 200, 3_000);
        }
        try (PoolInspector in = PoolInspector.open(p)) {
            assertTrue(in.header().resizes() > PoolHeader.readFrom(MemorySegment.ofArray(saved), 0, p).resizes(),
                    "the pool resized");
        }
        restoreHeaderRegion(p, saved);
        assertStale(p, "was emptied and given to the value heap");
    }

    @Test
    void aHeaderFromBeforeAnUnfinishedResizeIsRefused() throws IOException {
        Path p = pools.pool("mid-resize.pool");
        try (CpuEngine engine = CpuEngine.create(config(p, CrashHook.NONE))) {
            putAll(engine, 0, 100);
        }
        byte[] saved = headerRegion(p);
        // A crash after the bottom level was emptied into the new top level, before the commit that drops it.
        CpuEngine engine = CpuEngine.open(config(p, point -> {
            if (point == CrashPoint.RESIZE_REHASHED) {
                throw new IllegalStateException("simulated crash");
            }
        }));
        assertThrows(IllegalStateException.class, () -> putAll(engine, 100, 3_000));
        engine.abandon();
        restoreHeaderRegion(p, saved);
        assertStale(p, "holds items");
    }

    /** The control: a crash after the new level is allocated, before the header names it, leaves a pool that opens. */
    @Test
    void anEmptyLevelACrashLeftPastTheEndIsNoReasonToRefuse() {
        Path p = pools.pool("allocated.pool");
        try (CpuEngine engine = CpuEngine.create(config(p, CrashHook.NONE))) {
            putAll(engine, 0, 100);
        }
        CpuEngine engine = CpuEngine.open(config(p, point -> {
            if (point == CrashPoint.RESIZE_LEVEL_ALLOCATED) {
                throw new IllegalStateException("simulated crash");
            }
        }));
        assertThrows(IllegalStateException.class, () -> putAll(engine, 100, 3_000));
        engine.abandon();
        try (CpuEngine reopened = CpuEngine.open(config(p, CrashHook.NONE))) {
            MemorySegment out = MemorySegment.ofArray(new byte[VALUE_SIZE]);
            for (long k = 0; k < 100; k++) {
                assertEquals(org.gphash.Outcome.FOUND, reopened.get(key(k), out), "key " + k);
                assertArrayEquals(value(k).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                        out.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            }
        }
    }

    private static void assertStale(Path p, String why) throws IOException {
        byte[] before = Files.readAllBytes(p);
        PoolFormatException e = assertThrows(PoolFormatException.class, () -> CpuEngine.open(config(p, CrashHook.NONE)));
        assertEquals(PoolFormatException.Reason.FOREIGN_HEADER, e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains("older than the table") && e.getMessage().contains(why), e.getMessage());
        assertArrayEquals(before, Files.readAllBytes(p), "a refused open wrote to the pool");
        // `check` refuses it too, rather than calling it sound.
        assertThrows(PoolFormatException.class, () -> PoolInspector.open(p));
    }
}
