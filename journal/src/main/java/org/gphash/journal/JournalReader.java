package org.gphash.journal;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.zip.CRC32C;

import org.gphash.error.JournalDamagedException;
import org.gphash.error.PoolIoException;

/**
 * Reads the journal's segments in order, checking every record: its magic, both checksums, its
 * length, and that sequence numbers run on without a gap from segment to segment.
 *
 * <p>Where a record fails a check, what follows decides what it is. In the last segment, with
 * nothing valid after it, it is the torn tail of a crash (a record being written when the power
 * went): reading stops there and says where. Anywhere else (an earlier segment, or a valid record
 * further on) it is damage no crash leaves, and the journal is refused with
 * {@link JournalDamagedException} naming the file, the offset and the sequence number.
 */
final class JournalReader {

    /**
     * Where the valid records end: the segment to append to, whether its records carry lengths, its valid
     * bytes, the next sequence number, and what was cut.
     */
    record End(Path segment, boolean lengths, long segmentFirstSeq, long validBytes, long nextSeq, String cut) {
    }

    /**
     * One valid record, its columns as views of the reader's buffer (valid until the next record): the
     * puts' values back to back, each of the value size, or, where {@code lengths} is not null (a
     * segment of {@link RecordFormat#VERSION_LENGTHS}), each at its length there (4 bytes a put).
     */
    record Record(long seq, int count, int puts, MemorySegment kinds, MemorySegment keys, MemorySegment lengths,
                  MemorySegment values) {

        /** The length of put {@code put}'s value (puts counted from 0) in a record of values of {@code valueSize} at most. */
        int length(int put, int valueSize) {
            return lengths == null ? valueSize : lengths.get(ValueLayout.JAVA_INT_UNALIGNED, 4L * put);
        }
    }

    @FunctionalInterface
    interface RecordConsumer {
        void accept(Record record);
    }

    private final Path dir;
    private final int keySize;
    private final int valueSize;
    private final long journalId;
    private final ByteBuffer buf = RecordFormat.little(RecordFormat.RECORD_HEADER + RecordFormat.MAX_BODY + 8);

    JournalReader(Path dir, int keySize, int valueSize, long journalId) {
        this.dir = dir;
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.journalId = journalId;
    }

    /**
     * Reads every record from the first segment that can hold {@code fromSeq} on, giving each record
     * whose sequence number is at least {@code fromSeq} to {@code consumer}; returns where the valid
     * records end. With {@code fromSeq} at the last segment's start, this only finds the end.
     *
     * @param firstExpected the sequence number the journal must start at or before (a checkpoint's), or -1 for any
     */
    End read(long fromSeq, long firstExpected, RecordConsumer consumer) {
        List<Path> segments = JournalFiles.list(dir, false);
        if (segments.isEmpty()) {
            return new End(null, false, 0, 0, Math.max(1, fromSeq), "");
        }
        int start = 0;
        for (int i = 0; i < segments.size(); i++) {
            if (JournalFiles.seqOf(segments.get(i), false) <= fromSeq) {
                start = i;
            }
        }
        long firstSeq = JournalFiles.seqOf(segments.get(start), false);
        if (firstExpected >= 0 && firstSeq > firstExpected) {
            throw new JournalDamagedException(segments.get(start), 0, "the journal starts at sequence number " + firstSeq
                    + " but the checkpoint needs it from " + firstExpected + ": segments are missing");
        }
        long expected = firstSeq;
        End end = null;
        for (int i = start; i < segments.size(); i++) {
            Path seg = segments.get(i);
            long segFirst = JournalFiles.seqOf(seg, false);
            if (segFirst != expected) {
                throw new JournalDamagedException(seg, 0, "segment starts at sequence number " + segFirst
                        + " but the one before it ends at " + (expected - 1) + ": a segment is missing or cut");
            }
            boolean last = i == segments.size() - 1;
            end = readSegment(seg, segFirst, last, fromSeq, consumer);
            expected = end.nextSeq();
        }
        return end;
    }

    private End readSegment(Path seg, long segFirst, boolean last, long fromSeq, RecordConsumer consumer) {
        try (FileChannel ch = FileChannel.open(seg, StandardOpenOption.READ)) {
            long size = ch.size();
            int version = validHeader(ch, seg, segFirst, size, last);
            if (version == 0) {
                // A last segment whose header never reached the disk whole: an empty segment, started again.
                return new End(null, false, 0, 0, segFirst, size == 0 ? "" : "segment " + seg.getFileName()
                        + " has a torn header (" + size + " bytes): started again");
            }
            boolean lengths = version == RecordFormat.VERSION_LENGTHS;
            long at = RecordFormat.SEGMENT_HEADER;
            long seq = segFirst;
            while (at < size) {
                String bad = readRecord(ch, at, size, seq, lengths);
                if (bad != null) {
                    if (!last || validRecordAfter(ch, at + 1, size)) {
                        throw new JournalDamagedException(seg, at, "record " + seq + " is damaged (" + bad + ")"
                                + (last ? " and valid records follow it" : " in a segment that is not the last"));
                    }
                    return new End(seg, lengths, segFirst, at, seq, "record " + seq + " at byte " + at + " of "
                            + seg.getFileName() + " is torn (" + bad + "); " + (size - at) + " bytes after it dropped");
                }
                int count = buf.getInt(4);
                int puts = buf.getInt(20);
                int body = buf.getInt(16);
                if (seq >= fromSeq) {
                    MemorySegment all = MemorySegment.ofBuffer(buf.duplicate().clear());
                    long kindsAt = RecordFormat.RECORD_HEADER;
                    long keysAt = kindsAt + RecordFormat.align8(count);
                    long lengthsAt = kindsAt + RecordFormat.lengthsAt(count, keySize);
                    long valuesAt = lengths ? lengthsAt + RecordFormat.align8(4L * puts) : lengthsAt;
                    long end = RecordFormat.RECORD_HEADER + (long) body;
                    consumer.accept(new Record(seq, count, puts, all.asSlice(kindsAt, count),
                            all.asSlice(keysAt, (long) count * keySize), lengths ? all.asSlice(lengthsAt, 4L * puts) : null,
                            all.asSlice(valuesAt, end - valuesAt)));
                }
                at += RecordFormat.RECORD_HEADER + body;
                seq++;
            }
            return new End(seg, lengths, segFirst, at, seq, "");
        } catch (IOException e) {
            throw new PoolIoException("cannot read journal segment " + seg + ": " + e.getMessage(), e);
        }
    }

    /** The segment's version where its header is valid; 0 for a last segment whose header is torn. */
    private int validHeader(FileChannel ch, Path seg, long segFirst, long size, boolean last) throws IOException {
        if (size < RecordFormat.SEGMENT_HEADER) {
            if (last) {
                return 0;
            }
            throw new JournalDamagedException(seg, 0, "segment is " + size + " bytes, shorter than its header");
        }
        ByteBuffer h = RecordFormat.little(RecordFormat.SEGMENT_HEADER);
        JournalFiles.readFully(ch, h, 0);
        String bad = h.getLong(0) != RecordFormat.SEGMENT_MAGIC ? "not a gphash journal segment"
                : h.getInt(60) != Crc.of(h, 0, 60) ? "header checksum mismatch"
                : h.getInt(8) != RecordFormat.VERSION && h.getInt(8) != RecordFormat.VERSION_LENGTHS
                        ? "unsupported journal version " + h.getInt(8)
                : h.getInt(12) != keySize || h.getInt(16) != valueSize ? "key/value size " + h.getInt(12) + "/"
                        + h.getInt(16) + ", the index has " + keySize + "/" + valueSize
                : h.getLong(24) != segFirst ? "header says first sequence number " + h.getLong(24) + ", its name " + segFirst
                : h.getLong(32) != journalId ? "segment belongs to another journal (identity " + Long.toHexString(h.getLong(32)) + ")"
                : null;
        if (bad == null) {
            return h.getInt(8);
        }
        if (last && size == RecordFormat.SEGMENT_HEADER && isZero(h)) {
            return 0;
        }
        throw new JournalDamagedException(seg, 0, bad);
    }

    private static boolean isZero(ByteBuffer h) {
        for (int i = 0; i < h.limit(); i++) {
            if (h.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Reads the record at {@code at} into the buffer and checks it; null if valid, else what is wrong. */
    private String readRecord(FileChannel ch, long at, long size, long seq, boolean lengths) throws IOException {
        if (size - at < RecordFormat.RECORD_HEADER) {
            return "only " + (size - at) + " bytes of its header";
        }
        buf.clear().limit(RecordFormat.RECORD_HEADER);
        JournalFiles.readFully(ch, buf, at);
        if (buf.getInt(0) != RecordFormat.RECORD_MAGIC) {
            return "no record magic";
        }
        if (buf.getInt(32) != Crc.of(buf, 0, 32) || buf.getInt(36) != 0) {
            return "header checksum mismatch";
        }
        int count = buf.getInt(4);
        int puts = buf.getInt(20);
        int body = buf.getInt(16);
        long fixed = lengths ? RecordFormat.bodyLengthWithLengths(count, puts, keySize, 0)
                : RecordFormat.bodyLength(count, puts, keySize, valueSize);
        if (count < 1 || puts < 0 || puts > count || body > RecordFormat.MAX_BODY
                || (lengths ? body < fixed || body - fixed > (long) puts * valueSize : body != fixed)) {
            return "impossible lengths (writes " + count + ", puts " + puts + ", body " + body + ")";
        }
        if (buf.getLong(8) != seq) {
            return "sequence number " + buf.getLong(8) + " where " + seq + " was due";
        }
        if (size - at - RecordFormat.RECORD_HEADER < body) {
            return "only " + (size - at - RecordFormat.RECORD_HEADER) + " of its " + body + " body bytes";
        }
        buf.limit(RecordFormat.RECORD_HEADER + body).position(RecordFormat.RECORD_HEADER);
        JournalFiles.readFully(ch, buf, at + RecordFormat.RECORD_HEADER);
        CRC32C crc = new CRC32C();
        crc.update(buf.duplicate().position(RecordFormat.RECORD_HEADER).limit(RecordFormat.RECORD_HEADER + body));
        if ((int) crc.getValue() != buf.getInt(24)) {
            return "body checksum mismatch";
        }
        int kindsEnd = RecordFormat.RECORD_HEADER + count;
        int seenPuts = 0;
        for (int i = RecordFormat.RECORD_HEADER; i < kindsEnd; i++) {
            byte k = buf.get(i);
            if (k == RecordFormat.PUT) {
                seenPuts++;
            } else if (k != RecordFormat.DELETE) {
                return "write kind " + k;
            }
        }
        if (seenPuts != puts) {
            return "puts counted " + seenPuts + ", header says " + puts;
        }
        return lengths ? checkLengths(count, puts, body - fixed) : null;
    }

    /** Null where every put's length is at most the value size and they add up to the values' bytes; else what is wrong. */
    private String checkLengths(int count, int puts, long valueBytes) {
        int lengthsAt = RecordFormat.RECORD_HEADER + (int) RecordFormat.lengthsAt(count, keySize);
        long sum = 0;
        for (int p = 0; p < puts; p++) {
            int length = buf.getInt(lengthsAt + 4 * p);
            if (length < 0 || length > valueSize) {
                return "put " + p + " has a value of " + length + " bytes, over the value size " + valueSize;
            }
            sum += length;
        }
        return sum == valueBytes ? null : "its values' lengths add up to " + sum + " bytes, its body holds " + valueBytes;
    }

    /** Whether a valid record header starts anywhere from {@code from} on (so a bad record is not the tail). */
    private boolean validRecordAfter(FileChannel ch, long from, long size) throws IOException {
        ByteBuffer scan = RecordFormat.little(1 << 20);
        for (long at = from; at < size - RecordFormat.RECORD_HEADER; ) {
            scan.clear();
            long n = Math.min(scan.capacity(), size - at);
            scan.limit((int) n);
            JournalFiles.readFully(ch, scan, at);
            for (int i = 0; i + RecordFormat.RECORD_HEADER <= n; i++) {
                if (scan.getInt(i) == RecordFormat.RECORD_MAGIC && scan.getInt(i + 32) == Crc.of(scan, i, i + 32)) {
                    return true;
                }
            }
            at += Math.max(1, n - RecordFormat.RECORD_HEADER);
        }
        return false;
    }
}
