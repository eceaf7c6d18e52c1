package org.gphash.journal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.gphash.GPHashIndex;
import org.gphash.Journaling;
import org.gphash.error.JournalDamagedException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A journal over values of any length (a format 3 pool on the CPU engine): its records and checkpoints
 * keep each value's length ({@link RecordFormat#VERSION_LENGTHS}, {@link Checkpoint#VERSION_LENGTHS}),
 * are checked as closely as those of values of one size (a cut at any byte replays the records wholly
 * before it, a changed byte cuts the last record or refuses the journal, a checkpoint cut or changed
 * anywhere is refused), and a journal begun without lengths goes on in a segment with them.
 */
class JournalLengthsTest {

    private static final int VALUE = 40;
    private static final int PUTS = 12;

    @TempDir
    static Path tmp;
    static Path journal;
    static long journalId;
    static byte[] segment;
    /** Where each record of the segment ends. */
    static List<Integer> ends = new ArrayList<>();
    static byte[] checkpoint;
    static Path checkpointFile;

    @BeforeAll
    static void write() throws IOException {
        Path pool = tmp.resolve("p.pool");
        journal = tmp.resolve("j");
        try (GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(VALUE).poolFormat(3).initialCapacity(64)
                .journal(Journaling.in(journal).checkpointEvery(java.time.Duration.ZERO)).create()) {
            assertTrue(index.valueLengths());
            for (int i = 0; i < 5; i++) {
                index.put(1000 + i, value(1000 + i));
            }
            index.checkpoint();
            for (int i = 0; i < PUTS; i++) {
                index.put(i, value(i));
            }
            index.delete(3);
        }
        journalId = JournalState.read(journal).journalId();
        List<Path> segs = JournalFiles.list(journal, false);
        assertEquals(1, segs.size());
        segment = Files.readAllBytes(segs.get(0));
        ByteBuffer b = ByteBuffer.wrap(segment).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(RecordFormat.VERSION_LENGTHS, b.getInt(8), "a segment of records with lengths");
        for (int at = RecordFormat.SEGMENT_HEADER; at < segment.length; ) {
            at += RecordFormat.RECORD_HEADER + b.getInt(at + 16);
            ends.add(at);
        }
        assertEquals(5 + PUTS + 1, ends.size());
        checkpointFile = JournalFiles.list(journal, true).get(0);
        checkpoint = Files.readAllBytes(checkpointFile);
    }

    /** Key {@code k}'s value: {@code k % (VALUE + 1)} bytes, so 0 to the value size. */
    private static byte[] value(long k) {
        byte[] v = new byte[(int) (k % (VALUE + 1))];
        for (int i = 0; i < v.length; i++) {
            v[i] = (byte) (k * 31 + i);
        }
        return v;
    }

    private static List<Long> read(Path dir, byte[] seg, JournalReader.End[] end) throws IOException {
        return JournalTestFiles.readSegment(dir, JournalFiles.list(journal, false).get(0), seg, VALUE, journalId, end);
    }

    @Test
    void aCleanReopenAndARebuildGiveEveryValueAtItsLength() throws IOException {
        Path dir = tmp.resolve("api");
        copyJournal(dir);
        // The pool is missing: rebuilt from the checkpoint (5 values) and the journal, in format 3 though
        // the builder names no format.
        try (GPHashIndex index = GPHashIndex.builder(tmp.resolve("api.pool")).journal(dir).open()) {
            assertTrue(index.lastRecovery().journal().rebuilt(), index.lastRecovery().toString());
            assertEquals(5, index.lastRecovery().journal().checkpointEntries());
            assertTrue(index.valueLengths());
            for (int i = 0; i < PUTS; i++) {
                assertArrayEquals(i == 3 ? null : value(i), index.get(i), "key " + i);
            }
            for (int i = 0; i < 5; i++) {
                assertArrayEquals(value(1000 + i), index.get(1000 + i), "key " + (1000 + i));
            }
        }
    }

    @Test
    void aJournalCutAtAnyByteReplaysTheRecordsWhollyBeforeIt() throws IOException {
        for (int at = 0; at <= segment.length; at++) {
            JournalReader.End[] end = new JournalReader.End[1];
            List<Long> seqs = read(tmp.resolve("cut-" + at), Arrays.copyOf(segment, at), end);
            int cut = at;
            long whole = ends.stream().filter(e -> e <= cut).count();
            assertEquals(whole, seqs.size(), "cut at byte " + at);
            boolean onABoundary = at == 0 || at == RecordFormat.SEGMENT_HEADER || ends.contains(at);
            assertEquals(!onABoundary, !end[0].cut().isEmpty(), "cut at byte " + at + ": " + end[0]);
        }
    }

    @Test
    void aChangedByteCutsTheLastRecordAndRefusesAnyOther() throws IOException {
        int lastStart = ends.get(ends.size() - 2);
        // Every byte of the segment header, the first two records and the last two; every fifth between.
        int whole = ends.get(1);
        int wholeAgain = ends.get(ends.size() - 3);
        for (int at = 0; at < segment.length; at += at < whole || at >= wholeAgain ? 1 : 5) {
            byte[] bad = segment.clone();
            bad[at] ^= 0x10;
            Path dir = tmp.resolve("flip-" + at);
            JournalReader.End[] end = new JournalReader.End[1];
            if (at >= lastStart) {
                assertEquals(ends.size() - 1, read(dir, bad, end).size(), "byte " + at + " of the last record changed");
            } else {
                assertThrows(JournalDamagedException.class, () -> read(dir, bad, end), "byte " + at + " changed");
            }
        }
    }

    @Test
    void aCheckpointCutOrChangedAnywhereIsRefused() throws IOException {
        Path dir = tmp.resolve("ckpt");
        Files.createDirectories(dir);
        Path file = dir.resolve(checkpointFile.getFileName());
        assertEquals(Checkpoint.VERSION_LENGTHS, ByteBuffer.wrap(checkpoint).order(ByteOrder.LITTLE_ENDIAN).getInt(8));
        for (int at = 0; at < checkpoint.length; at++) {
            Files.write(file, Arrays.copyOf(checkpoint, at));
            assertThrows(JournalDamagedException.class, () -> Checkpoint.read(file, 8, VALUE, journalId, null), "cut at " + at);
            byte[] bad = checkpoint.clone();
            bad[at] ^= 0x01;
            Files.write(file, bad);
            assertThrows(JournalDamagedException.class, () -> Checkpoint.read(file, 8, VALUE, journalId, null), "byte " + at);
        }
        Files.write(file, checkpoint);
        List<byte[]> values = new ArrayList<>();
        Checkpoint.read(file, 8, VALUE, journalId, (count, keys, lengths, packed) -> {
            long at = 0;
            for (int i = 0; i < count; i++) {
                int length = lengths.get(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, 4L * i);
                values.add(packed.asSlice(at, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
                at += length;
            }
            assertEquals(packed.byteSize(), at, "the values are packed at their lengths");
        });
        assertEquals(5, values.size());
        assertTrue(values.stream().anyMatch(v -> Arrays.equals(v, value(1003))), "1003's 19 bytes");
    }

    @Test
    void aJournalBegunWithoutLengthsGoesOnInASegmentWithThem() throws IOException {
        Path dir = tmp.resolve("versions");
        Files.createDirectories(dir);
        long id = 42;
        Journaling settings = Journaling.in(dir);
        Journal first = new Journal(dir, 8, VALUE, false, id, settings, new JournalReader.End(null, false, 0, 0, 1, ""),
                Journal.FlushObserver.NONE);
        append(first, 1, VALUE);
        append(first, 2, VALUE);
        RecordBody refused = first.body();
        try {
            assertThrows(IllegalArgumentException.class, () -> refused.put(key(3), 0, MemorySegment.ofArray(new byte[5]), 0, 5),
                    "a journal without lengths takes values of the value size only");
        } finally {
            first.release(refused);
        }
        first.close();
        JournalReader reader = new JournalReader(dir, 8, VALUE, id);
        JournalReader.End end = reader.read(0, -1, r -> { });
        assertEquals(3, end.nextSeq());
        Journal second = new Journal(dir, 8, VALUE, true, id, settings, end, Journal.FlushObserver.NONE);
        append(second, 3, 5);
        append(second, 4, 0);
        second.close();
        assertEquals(2, JournalFiles.list(dir, false).size(), "the records with lengths start a segment of their own");
        List<int[]> seen = new ArrayList<>();
        reader.read(0, -1, r -> seen.add(new int[] {(int) r.seq(), r.lengths() == null ? -1 : 1, r.length(0, VALUE),
                (int) r.values().byteSize()}));
        assertEquals(4, seen.size());
        assertArrayEquals(new int[] {1, -1, VALUE, VALUE}, seen.get(0));
        assertArrayEquals(new int[] {2, -1, VALUE, VALUE}, seen.get(1));
        assertArrayEquals(new int[] {3, 1, 5, 5}, seen.get(2));
        assertArrayEquals(new int[] {4, 1, 0, 0}, seen.get(3));
        JournalReader.End last = reader.read(0, -1, r -> { });
        assertNotNull(last.segment());
        assertTrue(last.lengths());
    }

    /**
     * A journal whose state says nothing of lengths (made over an engine of one value size, as the GPU's,
     * or by a version before the field) learns it from the first engine with lengths that opens the pool,
     * so that a rebuild after a power cut makes a format 3 pool for the shorter values journaled since.
     */
    @Test
    void aStateThatSaidNothingOfLengthsLearnsItAtTheFirstOpenWithThem() throws IOException {
        Path pool = tmp.resolve("learn.pool");
        Path dir = tmp.resolve("learn");
        Journaling settings = Journaling.in(dir).checkpointEvery(java.time.Duration.ZERO);
        try (GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(VALUE).poolFormat(3).initialCapacity(64)
                .journal(settings).create()) {
            index.put(1L, value(1));
        }
        JournalState s = JournalState.read(dir);
        assertTrue(s.valueLengths());
        new JournalState(s.journalId(), s.keySize(), s.valueSize(), false, s.poolIdentity(), s.bootId()).write(dir);
        try (GPHashIndex index = GPHashIndex.builder(pool).journal(settings).open()) {
            assertTrue(!index.lastRecovery().journal().rebuilt(), index.lastRecovery().toString());
            index.put(2L, value(2));
        }
        assertTrue(JournalState.read(dir).valueLengths(), "the open with lengths said so");
        Files.delete(pool);   // a power cut on tmpfs
        try (GPHashIndex index = GPHashIndex.builder(pool).journal(settings).open()) {
            assertTrue(index.lastRecovery().journal().rebuilt(), index.lastRecovery().toString());
            assertTrue(index.valueLengths());
            assertArrayEquals(value(1), index.get(1L));
            assertArrayEquals(value(2), index.get(2L));
        }
    }

    private static MemorySegment key(long k) {
        return MemorySegment.ofArray(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(k).array());
    }

    private static void append(Journal journal, long k, int length) {
        RecordBody body = journal.body();
        try {
            byte[] v = new byte[length];
            Arrays.fill(v, (byte) k);
            body.put(key(k), 0, MemorySegment.ofArray(v), 0, length);
            body.seal();
            journal.awaitDurable(journal.append(body));
        } finally {
            journal.release(body);
        }
    }

    private static void copyJournal(Path dir) throws IOException {
        JournalTestFiles.copyJournal(journal, dir);
    }
}
