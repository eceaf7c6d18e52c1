package org.gphash.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import org.gphash.Backend;
import org.gphash.GPHashConfig;
import org.gphash.Geometry;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.index.api.TestPools;
import org.gphash.persistence.PoolFile;
import org.gphash.spi.CrashHook;
import org.gphash.table.PoolTable;
import org.gphash.table.TableKernels;
import org.gphash.table.TableLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The contract the GPU engine's open relies on to start its CUDA runtime beside the pool's open
 * ({@code StartingTableKernels}): the pool's open tells the kernels before its first write
 * ({@link TableKernels#beforeWrites}), after attaching them; kernels that refuse there leave the pool
 * byte for byte as it was (a create, no file); kernels that do not open it as the CPU engine would.
 */
class KernelsBeforeWritesTest {

    private static final int VS = 16;
    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    /** Kernels that run no pass (a clean open needs none), record what the open told them, and may refuse before its writes. */
    private static final class Recording implements TableKernels {
        final List<String> calls = new ArrayList<>();
        final boolean refuse;

        Recording(boolean refuse) {
            this.refuse = refuse;
        }

        @Override
        public void attach(PoolFile file, Geometry geometry, long[] seeds, int formatVersion) {
            calls.add("attach");
        }

        @Override
        public void beforeWrites() {
            calls.add("beforeWrites");
            if (refuse) {
                throw new IllegalStateException("the GPU cannot run the engine");
            }
        }

        @Override
        public RecoveryCounts countBrokenAndDuplicates(TableLayout layout) {
            throw new UnsupportedOperationException("a clean open runs no pass");
        }

        @Override
        public RecoveryCounts clearBrokenAndDuplicates(TableLayout layout) {
            throw new UnsupportedOperationException("a clean open runs no pass");
        }

        @Override
        public MarkedBlocks markValueBlocks(TableLayout layout, HeapLayout heap, boolean validItemsOnly) {
            throw new UnsupportedOperationException("a clean open runs no pass");
        }

        @Override
        public MarkedSegments markValueSegments(TableLayout layout, long[] segmentOffsets, boolean validItemsOnly) {
            throw new UnsupportedOperationException("a clean open runs no pass");
        }

        @Override
        public RehashResult rehashBottom(TableLayout layout) {
            throw new UnsupportedOperationException("a clean open runs no pass");
        }
    }

    private static GPHashConfig config(Path p) {
        return Configs.of(p, 8, VS, 0, 0, 0, 256, Long.MAX_VALUE, Backend.CPU, false, OptionalLong.of(3), CrashHook.NONE,
                BktCacheConfig.DISABLED);
    }

    private static MemorySegment value(long k) {
        byte[] v = new byte[VS];
        v[0] = (byte) k;
        return MemorySegment.ofArray(v);
    }

    @Test
    void kernelsHearOfTheFirstWriteAndARefusalThereWritesNothing() throws Exception {
        Path p = pools.pool("before-writes.pool");
        PoolTable created = PoolTable.create(config(p), null);
        try {
            CpuOperations ops = CpuOperations.on(created);
            for (long k = 0; k < 100; k++) {
                assertEquals(Outcome.INSERTED.code(), ops.write(OpKind.PUT, CrashPointTest.key(k), 0, value(k), 0, null, 0));
            }
        } finally {
            created.close();
        }
        byte[] before = Files.readAllBytes(p);
        Recording refusing = new Recording(true);
        assertThrows(IllegalStateException.class, () -> PoolTable.open(config(p), refusing));
        assertEquals(List.of("attach", "beforeWrites"), refusing.calls);
        assertArrayEquals(before, Files.readAllBytes(p), "an open its kernels refused wrote to the pool");

        Recording willing = new Recording(false);
        PoolTable pool = PoolTable.open(config(p), willing);
        try {
            assertEquals(List.of("attach", "beforeWrites"), willing.calls);
            CpuOperations ops = CpuOperations.on(pool);
            MemorySegment out = MemorySegment.ofArray(new byte[VS]);
            for (long k = 0; k < 100; k++) {
                assertEquals(Outcome.FOUND.code(), ops.get(CrashPointTest.key(k), 0, out, 0), "key " + k);
                assertArrayEquals(value(k).toArray(ValueLayout.JAVA_BYTE),
                        out.toArray(ValueLayout.JAVA_BYTE), "key " + k);
            }
        } finally {
            pool.close();
        }
    }

    @Test
    void aCreateItsKernelsRefuseLeavesNoFile() {
        Path p = pools.pool("refused-create.pool");
        Recording refusing = new Recording(true);
        assertThrows(IllegalStateException.class, () -> PoolTable.create(config(p), refusing));
        assertEquals(List.of("attach", "beforeWrites"), refusing.calls);
        assertFalse(Files.exists(p), "a create its kernels refused left a file");
    }
}
