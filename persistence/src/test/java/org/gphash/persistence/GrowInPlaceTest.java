package org.gphash.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A writable pool on tmpfs grows in place ({@link ReservedMapping}): same address, earlier segments
 * still valid, the listener told only about the new part; past its reservation it is remapped whole,
 * as a pool elsewhere always is.
 */
class GrowInPlaceTest {

    private Path dir;
    private final long defaultReserve = ReservedMapping.minReserve;

    @BeforeEach
    void tmpfsDirectory() throws IOException {
        Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && "tmpfs".equals(Files.getFileStore(shm).type()), "no tmpfs at /dev/shm");
        dir = Files.createTempDirectory(shm, "gphash-grow-");
    }

    @AfterEach
    void cleanUp() throws IOException {
        ReservedMapping.minReserve = defaultReserve;
        if (dir != null) {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    /** What a listener was told, in order. */
    private static final class Recorder implements MappingListener {
        final List<String> events = new ArrayList<>();

        @Override
        public void beforeUnmap(MemorySegment old) {
            events.add("unmap " + old.byteSize());
        }

        @Override
        public void afterMap(MemorySegment current) {
            events.add("map " + current.byteSize());
        }

        @Override
        public void afterGrowInPlace(MemorySegment current, long previousSize) {
            events.add("grow " + previousSize + "->" + current.byteSize());
        }
    }

    @Test
    void growthKeepsTheAddressAndEarlierSegments() {
        Path p = dir.resolve("a.pool");
        long first = 100_000;  // not a whole number of pages: the next part starts at the next page
        try (PoolFile f = PoolFile.create(p, first, false)) {
            f.publish();
            Recorder r = new Recorder();
            f.setMappingListener(r);
            assertEquals(List.of("map " + f.segment().byteSize()), r.events, "told of the mapping as it is now");
            r.events.clear();
            MemorySegment before = f.segment();
            before.set(ValueLayout.JAVA_LONG, 8, 0x1111L);
            before.set(ValueLayout.JAVA_LONG, first - 8, 0x2222L);
            f.grow(5_000_000);
            MemorySegment after = f.segment();
            assertEquals(before.address(), after.address(), "the pool keeps its address");
            assertEquals(5_000_000, after.byteSize());
            assertEquals(0x1111L, before.get(ValueLayout.JAVA_LONG, 8), "the earlier segment is still valid");
            assertEquals(0x2222L, after.get(ValueLayout.JAVA_LONG, first - 8));
            assertEquals(0L, after.get(ValueLayout.JAVA_LONG, 4_999_992), "the new part reads as zeros");
            after.set(ValueLayout.JAVA_LONG, 4_999_992, 0x3333L);
            after.set(ValueLayout.JAVA_LONG, 200_000, 0x4444L);
            assertEquals(List.of("grow 100000->5000000"), r.events);
            f.syncAll();
            f.persister().persist(after, 0, after.byteSize());
        }
        assertThrows(IllegalStateException.class, () -> reopenedSegmentAfterClose(p).get(ValueLayout.JAVA_LONG, 0),
                "a segment of a closed pool throws instead of faulting");
        try (PoolFile f = PoolFile.open(p, false)) {
            MemorySegment s = f.segment();
            assertEquals(0x1111L, s.get(ValueLayout.JAVA_LONG, 8));
            assertEquals(0x2222L, s.get(ValueLayout.JAVA_LONG, first - 8));
            assertEquals(0x4444L, s.get(ValueLayout.JAVA_LONG, 200_000));
            assertEquals(0x3333L, s.get(ValueLayout.JAVA_LONG, 4_999_992));
        }
    }

    private static MemorySegment reopenedSegmentAfterClose(Path p) {
        MemorySegment s;
        try (PoolFile f = PoolFile.open(p, false)) {
            s = f.segment();
        }
        return s;
    }

    @Test
    void growthPastTheReservationRemapsTheWholeFile() {
        ReservedMapping.minReserve = 1 << 20;
        Path p = dir.resolve("b.pool");
        try (PoolFile f = PoolFile.create(p, 64 << 10, false)) {
            f.publish();
            Recorder r = new Recorder();
            f.setMappingListener(r);
            assertEquals(List.of("map " + f.segment().byteSize()), r.events, "told of the mapping as it is now");
            r.events.clear();
            MemorySegment before = f.segment();
            before.set(ValueLayout.JAVA_LONG, 0, 7L);
            f.grow(512 << 10);  // within the reservation of 1 MiB
            f.grow(3 << 20);    // past it
            MemorySegment after = f.segment();
            assertNotEquals(before.address(), after.address());
            assertEquals(7L, after.get(ValueLayout.JAVA_LONG, 0));
            assertThrows(IllegalStateException.class, () -> before.get(ValueLayout.JAVA_LONG, 0),
                    "the replaced mapping is gone");
            assertEquals(List.of("grow 65536->524288", "unmap 524288", "map 3145728"), r.events);
        }
    }

    /**
     * Growing ahead of need happens only where it moves nothing: within the reservation it grows in
     * place (true); past it, or on a pool mapped through the JDK, it does nothing (false).
     */
    @Test
    void growingAheadOnlyWhereNothingMoves() {
        ReservedMapping.minReserve = 1 << 20;
        Path p = dir.resolve("ahead.pool");
        try (PoolFile f = PoolFile.create(p, 64 << 10, false)) {
            f.publish();
            Recorder r = new Recorder();
            f.setMappingListener(r);
            assertEquals(List.of("map " + f.segment().byteSize()), r.events, "told of the mapping as it is now");
            r.events.clear();
            long address = f.segment().address();
            assertTrue(f.growAhead(256 << 10));
            assertEquals(256 << 10, f.fileSize());
            assertEquals(address, f.segment().address());
            assertTrue(f.growAhead(128 << 10), "already long enough");
            assertFalse(f.growAhead(3 << 20), "past the reservation a growth would remap");
            assertEquals(256 << 10, f.fileSize(), "a refused growth ahead changes nothing");
            assertEquals(List.of("grow 65536->262144"), r.events);
        }
        Path q = dir.resolve("ahead-jdk.pool");
        try (PoolFile f = PoolFile.create(q, 64 << 10, true)) {  // persisted through the JDK: remapped at each growth
            f.publish();
            assertFalse(f.growAhead(128 << 10));
            assertEquals(64 << 10, f.fileSize());
        }
    }

    @Test
    void withoutAddressSpaceToReserveThePoolIsMappedAsTheJdkDoes() {
        ReservedMapping.minReserve = 1 << 20;
        Path p = dir.resolve("d.pool");
        try (PoolFile f = PoolFile.create(p, 64 << 10, false)) {
            f.publish();
            Recorder r = new Recorder();
            f.setMappingListener(r);
            assertEquals(List.of("map " + f.segment().byteSize()), r.events, "told of the mapping as it is now");
            r.events.clear();
            f.segment().set(ValueLayout.JAVA_LONG, 0, 5L);
            ReservedMapping.minReserve = 1L << 62;  // more than any address space: the reservation fails
            f.grow(2 << 20);  // past the first reservation (1 MiB): no new one, so a JDK mapping
            assertEquals(5L, f.segment().get(ValueLayout.JAVA_LONG, 0));
            f.segment().set(ValueLayout.JAVA_LONG, (2 << 20) - 8, 6L);
            f.grow(3 << 20);
            assertEquals(6L, f.segment().get(ValueLayout.JAVA_LONG, (2 << 20) - 8));
            assertEquals(List.of("unmap 65536", "map 2097152", "unmap 2097152", "map 3145728"), r.events,
                    "remapped whole at each growth, as a pool elsewhere is");
            f.syncAll();
        }
        try (PoolFile f = PoolFile.open(p, false)) {  // and a new open, with no reservation possible, maps too
            assertEquals(5L, f.segment().get(ValueLayout.JAVA_LONG, 0));
            assertEquals(6L, f.segment().get(ValueLayout.JAVA_LONG, (2 << 20) - 8));
        }
    }

    @Test
    void poolsPersistedThroughTheJdkAreRemappedAtEachGrowth() {
        Path p = dir.resolve("c.pool");
        try (PoolFile f = PoolFile.create(p, 64 << 10, true)) {  // msync through MemorySegment.force()
            f.publish();
            Recorder r = new Recorder();
            f.setMappingListener(r);
            assertEquals(List.of("map " + f.segment().byteSize()), r.events, "told of the mapping as it is now");
            r.events.clear();
            f.segment().set(ValueLayout.JAVA_LONG, 0, 9L);
            f.grow(1 << 20);
            assertEquals(9L, f.segment().get(ValueLayout.JAVA_LONG, 0));
            assertEquals(List.of("unmap 65536", "map 1048576"), r.events);
            f.syncAll();
        }
    }
}
