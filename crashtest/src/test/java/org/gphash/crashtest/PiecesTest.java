package org.gphash.crashtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import org.gphash.PersistenceMode;
import org.gphash.persistence.Persister;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness's parts on their own: values, the ack log, the power-fail shadow. */
class PiecesTest {

    @TempDir
    Path tmp;

    @Test
    void valuesAreWholeOnlyForTheirKeyAndUntouched() {
        byte[] v = Workload.value(42, 1234);
        assertTrue(Workload.whole(42, v));
        assertEquals(1234, Workload.seqOf(v));
        assertFalse(Workload.whole(43, v));
        byte[] torn = v.clone();
        System.arraycopy(Workload.value(42, 99), 0, torn, 0, 32); // half of another write
        assertFalse(Workload.whole(42, torn));
        assertFalse(Workload.whole(42, new byte[Workload.VALUE_SIZE]));
    }

    /** Format 3's values of many lengths: whole at their own length only, cut or grown they are not. */
    @Test
    void valuesOfEveryLengthAreWholeOnlyAsWritten() {
        int max = Workload.VALUE_SIZE_FORMAT_3;
        java.util.Set<Integer> lengths = new java.util.HashSet<>();
        for (long seq = 1; seq <= 2000; seq++) {
            int length = Workload.lengthOf(42, seq, max);
            assertTrue(length >= Workload.MIN_LENGTH && length <= max, "length " + length);
            lengths.add(length);
            byte[] v = Workload.value(42, seq, length);
            assertEquals(length, v.length);
            assertTrue(Workload.whole(42, v));
            assertEquals(seq, Workload.seqOf(v));
            assertFalse(Workload.whole(42, java.util.Arrays.copyOf(v, length - 1)), "cut by a byte");
            assertFalse(Workload.whole(42, java.util.Arrays.copyOf(v, length + 8)), "grown by zeros");
        }
        assertTrue(lengths.contains(max) && lengths.size() > 100, "lengths spread over the range: " + lengths.size());
        assertFalse(Workload.whole(42, new byte[Workload.MIN_LENGTH - 1]));
    }

    @Test
    void workloadIsAFunctionOfSeedAndSequence() {
        Workload a = new Workload(7, 100);
        Workload b = new Workload(7, 100);
        for (long s = 1; s < 1000; s++) {
            assertEquals(a.op(s), b.op(s));
            assertTrue(a.op(s).key() >= 1 && a.op(s).key() <= 100);
        }
    }

    @Test
    void eachWorkerThreadHasKeysOfItsOwnAndOneThreadHasThemAll() {
        Workload one = new Workload(7, 100);
        Workload alone = new Workload(7, 100, 1);
        Workload three = new Workload(7, 100, 3);
        java.util.Set<Long> seen = new java.util.HashSet<>();
        for (long s = 1; s < 3000; s++) {
            assertEquals(one.op(s), alone.op(s), "one thread: the workload of before threads came");
            for (int t = 0; t < 3; t++) {
                Workload.Op op = three.op(Workload.firstSeq(t) - 1 + s);
                assertEquals(t, Workload.threadOf(op.seq()));
                assertEquals(t, three.ownerOf(op.key()), "op " + op + " of thread " + t);
                assertTrue(op.key() >= 1 && op.key() <= 100, op.toString());
                seen.add(op.key());
            }
        }
        assertEquals(99, seen.size(), "33 keys each: the key left over (100) belongs to nobody");
        assertEquals(1, Workload.firstSeq(0), "thread 0 numbers its operations from 1, as one thread did");
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new Workload(7, 2, 3));
    }

    @Test
    void ackLogIgnoresATornLastRecordAndAGap() throws Exception {
        Path p = tmp.resolve("ack");
        try (AckLog log = AckLog.create(p)) {
            for (long s = 10; s < 15; s++) {
                log.append(s, s * 2, Workload.Kind.PUT, 1);
            }
        }
        assertEquals(5, AckLog.read(p, 10).size());
        // Half a sixth record, as a kill in the middle of the write leaves it.
        Files.write(p, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, StandardOpenOption.APPEND);
        List<AckLog.Ack> acks = AckLog.read(p, 10);
        assertEquals(5, acks.size());
        assertEquals(new AckLog.Ack(14, 28, Workload.Kind.PUT, 1), acks.get(4));
        // A flipped bit in the third record ends the valid prefix there.
        byte[] all = Files.readAllBytes(p);
        all[2 * AckLog.RECORD + 9] ^= 4;
        Files.write(p, all);
        assertEquals(2, AckLog.read(p, 10).size());
        assertEquals(0, AckLog.read(p, 11).size()); // wrong first sequence number
    }

    @Test
    void shadowKeepsOnlyPersistedCacheLines() {
        ShadowPersistence shadow = new ShadowPersistence(0, false, () -> { });
        MemorySegment mapping = Arena.ofAuto().allocate(4096, 64);
        Persister counting = new Persister() {
            @Override
            public void persist(MemorySegment m, long offset, long length) {
            }

            @Override
            public PersistenceMode mode() {
                return PersistenceMode.MEMORY;
            }
        };
        Persister p = shadow.decorate(tmp.resolve("x"), mapping, counting);
        mapping.set(ValueLayout.JAVA_LONG, 0, 1);      // persisted below
        mapping.set(ValueLayout.JAVA_LONG, 56, 2);     // same cache line: goes with it
        mapping.set(ValueLayout.JAVA_LONG, 64, 3);     // next line, never persisted
        mapping.set(ValueLayout.JAVA_LONG, 1024, 4);   // never persisted
        p.persist(mapping, 0, 8);
        assertEquals(1, shadow.persists());
        MemorySegment image = shadow.image();
        assertEquals(1, image.get(ValueLayout.JAVA_LONG, 0));
        assertEquals(2, image.get(ValueLayout.JAVA_LONG, 56));
        assertEquals(0, image.get(ValueLayout.JAVA_LONG, 64));
        assertEquals(0, image.get(ValueLayout.JAVA_LONG, 1024));
        // Issue 52 item 1: stores other threads make after the power cut never reach its image.
        mapping.set(ValueLayout.JAVA_LONG, 8, 5);
        assertEquals(0, image.get(ValueLayout.JAVA_LONG, 8));
        assertEquals(4096, image.byteSize());
    }

    @Test
    void theMutationDropsEightBytePersists() {
        ShadowPersistence shadow = new ShadowPersistence(0, true, () -> { });
        MemorySegment mapping = Arena.ofAuto().allocate(4096, 64);
        Persister p = shadow.decorate(tmp.resolve("x"), mapping, new Persister() {
            @Override
            public void persist(MemorySegment m, long offset, long length) {
            }

            @Override
            public PersistenceMode mode() {
                return PersistenceMode.MEMORY;
            }
        });
        mapping.set(ValueLayout.JAVA_LONG, 128, 9);
        p.persist(mapping, 128, 8);
        assertEquals(0, shadow.image().get(ValueLayout.JAVA_LONG, 128));
    }
}
