package org.gphash.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.gphash.GPHashIndex;
import org.gphash.JournalReplay;
import org.gphash.Journaling;
import org.gphash.error.JournalDamagedException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every torn and every damaged byte of a journal segment and of a checkpoint: a journal cut at any
 * byte replays exactly the records wholly before the cut; a byte changed in the last record cuts
 * replay there; a byte changed anywhere else (a segment header, an earlier record) refuses the journal
 * naming the file and the offset; a checkpoint cut or changed anywhere is refused. And through the
 * API: a damaged journal refuses the open, writes nothing, and a torn tail is reported.
 */
class JournalDamageTest {

    private static final int RECORDS = 9;
    /** The segment holds the 5 puts before the checkpoint too (it was not full, so nothing was dropped). */
    private static final int SEGMENT_RECORDS = 5 + RECORDS;
    private static final int VALUE = 16;
    /** A single put's record: 40-byte header, kinds padded to 8, an 8-byte key, a 16-byte value. */
    private static final int RECORD = 40 + 8 + 8 + VALUE;

    @TempDir
    static Path tmp;
    static Path journal;
    static long journalId;
    static byte[] segment;
    static byte[] checkpoint;
    static Path checkpointFile;

    @BeforeAll
    static void write() throws IOException {
        Path pool = tmp.resolve("p.pool");
        journal = tmp.resolve("j");
        try (GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(VALUE).initialCapacity(64)
                .journal(Journaling.in(journal).checkpointEvery(java.time.Duration.ZERO)).create()) {
            for (int i = 0; i < 5; i++) {
                index.put(1000 + i, value(1000 + i));
            }
            index.checkpoint();
            for (int i = 0; i < RECORDS; i++) {
                index.put(i, value(i));
            }
        }
        journalId = JournalState.read(journal).journalId();
        List<Path> segs = JournalFiles.list(journal, false);
        assertEquals(1, segs.size());
        segment = Files.readAllBytes(segs.get(0));
        assertEquals(RecordFormat.SEGMENT_HEADER + SEGMENT_RECORDS * RECORD, segment.length, "one segment of " + SEGMENT_RECORDS + " records");
        checkpointFile = JournalFiles.list(journal, true).get(0);
        checkpoint = Files.readAllBytes(checkpointFile);
    }

    private static byte[] value(long k) {
        byte[] v = new byte[VALUE];
        java.nio.ByteBuffer.wrap(v).putLong(k).putLong(~k);
        return v;
    }

    /** Reads a journal directory holding {@code seg} as its one segment; returns the sequence numbers replayed. */
    private static List<Long> read(Path dir, byte[] seg, JournalReader.End[] end) throws IOException {
        return JournalTestFiles.readSegment(dir, JournalFiles.list(journal, false).get(0), seg, VALUE, journalId, end);
    }

    private static long firstSeq() {
        return JournalFiles.seqOf(JournalFiles.list(journal, false).get(0), false);
    }

    @Test
    void aJournalCutAtAnyByteReplaysTheRecordsWhollyBeforeIt() throws IOException {
        for (int at = 0; at <= segment.length; at++) {
            byte[] cut = java.util.Arrays.copyOf(segment, at);
            JournalReader.End[] end = new JournalReader.End[1];
            List<Long> seqs = read(tmp.resolve("cut-" + at), cut, end);
            int whole = at < RecordFormat.SEGMENT_HEADER ? 0 : (at - RecordFormat.SEGMENT_HEADER) / RECORD;
            assertEquals(whole, seqs.size(), "cut at byte " + at);
            boolean torn = at > 0 && at < RecordFormat.SEGMENT_HEADER
                    || at > RecordFormat.SEGMENT_HEADER && (at - RecordFormat.SEGMENT_HEADER) % RECORD != 0;
            assertEquals(torn, !end[0].cut().isEmpty(), "cut at byte " + at + ": " + end[0]);
            assertEquals(firstSeq() + whole, end[0].nextSeq(), "cut at byte " + at);
        }
    }

    @Test
    void aChangedByteCutsTheLastRecordAndRefusesAnyOther() throws IOException {
        for (int at = 0; at < segment.length; at++) {
            byte[] bad = segment.clone();
            bad[at] ^= 0x10;
            Path dir = tmp.resolve("flip-" + at);
            JournalReader.End[] end = new JournalReader.End[1];
            int record = at < RecordFormat.SEGMENT_HEADER ? -1 : (at - RecordFormat.SEGMENT_HEADER) / RECORD;
            if (record == SEGMENT_RECORDS - 1) {
                List<Long> seqs = read(dir, bad, end);
                assertEquals(SEGMENT_RECORDS - 1, seqs.size(), "byte " + at + " of the last record changed");
                assertTrue(end[0].cut().contains("record " + (firstSeq() + SEGMENT_RECORDS - 1)), end[0].cut());
            } else {
                JournalDamagedException e = assertThrows(JournalDamagedException.class, () -> read(dir, bad, end),
                        "byte " + at + " changed");
                assertEquals(record < 0 ? 0 : RecordFormat.SEGMENT_HEADER + (long) record * RECORD, e.offset(), e.getMessage());
                assertTrue(e.getMessage().contains(".seg"), e.getMessage());
            }
        }
    }

    @Test
    void aCheckpointCutOrChangedAnywhereIsRefused() throws IOException {
        Path dir = tmp.resolve("ckpt");
        Files.createDirectories(dir);
        Path file = dir.resolve(checkpointFile.getFileName());
        for (int at = 0; at < checkpoint.length; at++) {
            Files.write(file, java.util.Arrays.copyOf(checkpoint, at));
            assertThrows(JournalDamagedException.class, () -> Checkpoint.read(file, 8, VALUE, journalId, null), "cut at " + at);
            byte[] bad = checkpoint.clone();
            bad[at] ^= 0x01;
            Files.write(file, bad);
            assertThrows(JournalDamagedException.class, () -> Checkpoint.read(file, 8, VALUE, journalId, null), "byte " + at);
        }
        Files.write(file, checkpoint);
        assertEquals(5, Checkpoint.read(file, 8, VALUE, journalId, null).entries());
    }

    @Test
    void aDamagedJournalRefusesTheOpenAndChangesNothing() throws IOException {
        Path dir = tmp.resolve("api-damaged");
        copyJournal(dir);
        Path seg = JournalFiles.list(dir, false).get(0);
        byte[] bad = segment.clone();
        bad[RecordFormat.SEGMENT_HEADER + RECORD + 45] ^= 0x40;   // the second record's body
        Files.write(seg, bad);
        Path pool = tmp.resolve("api-damaged.pool");   // missing: the open would rebuild
        JournalDamagedException e = assertThrows(JournalDamagedException.class, () -> GPHashIndex.builder(pool)
                .keySize(8).valueSize(VALUE).journal(dir).open());
        assertTrue(e.getMessage().contains(seg.getFileName().toString()) && e.getMessage().contains("record "), e.getMessage());
        assertEquals(java.util.Arrays.toString(bad), java.util.Arrays.toString(Files.readAllBytes(seg)), "the segment is untouched");
    }

    @Test
    void aTornTailIsCutAndReported() throws IOException {
        Path dir = tmp.resolve("api-torn");
        copyJournal(dir);
        Path seg = JournalFiles.list(dir, false).get(0);
        Files.write(seg, java.util.Arrays.copyOf(segment, segment.length - 5));
        Path pool = tmp.resolve("api-torn.pool");
        try (GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(VALUE).journal(dir).open()) {
            JournalReplay r = index.lastRecovery().journal();
            assertTrue(r.rebuilt());
            assertEquals(5, r.checkpointEntries());
            assertEquals(RECORDS - 1, r.recordsReplayed());
            assertTrue(r.cut().contains("torn"), r.cut());
            for (int i = 0; i < RECORDS - 1; i++) {
                assertEquals(java.util.Arrays.toString(value(i)), java.util.Arrays.toString(index.get(i)));
            }
            assertEquals(null, index.get(RECORDS - 1));
            for (int i = 0; i < 5; i++) {
                assertEquals(java.util.Arrays.toString(value(1000 + i)), java.util.Arrays.toString(index.get(1000 + i)));
            }
            index.put(77, value(77));   // appends after the cut
        }
        try (GPHashIndex index = GPHashIndex.builder(tmp.resolve("api-torn2.pool")).keySize(8).valueSize(VALUE)
                .journal(dir).open()) {
            assertEquals(java.util.Arrays.toString(value(77)), java.util.Arrays.toString(index.get(77)));
            assertTrue(index.lastRecovery().journal().cut().isEmpty(), index.lastRecovery().toString());
        }
    }

    private static void copyJournal(Path dir) throws IOException {
        JournalTestFiles.copyJournal(journal, dir);
    }
}
