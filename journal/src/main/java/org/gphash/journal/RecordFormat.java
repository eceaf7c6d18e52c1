package org.gphash.journal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The on-disk shape of the journal: segment headers and records (docs/DESIGN.md, "The journal").
 *
 * <p>A segment is a 64-byte header then records back to back. A record is a 40-byte header then its
 * body: one kind byte per write (PUT or DELETE), padded to 8 bytes, then every write's key, then the
 * value of every PUT, in order. In a segment of {@link #VERSION_LENGTHS} (a journal over an engine
 * whose values have any length: a format 3 pool) the keys are followed by each PUT's value length
 * (4 bytes, padded to 8 bytes) and the values are packed, each at its length; a segment of
 * {@link #VERSION} has every value at the value size. The body has its own CRC-32C, computed by the
 * writing thread before it takes the journal's lock; the header's CRC-32C covers the header with the
 * sequence number and the body's CRC, so a record is valid only when both match and a torn or stale
 * record cannot pass. Little-endian throughout.
 */
final class RecordFormat {

    static final long SEGMENT_MAGIC = 0x314C4E524A485047L;   // "GPHJRNL1"
    /** Segments whose values all have the value size. */
    static final int VERSION = 1;
    /** Segments whose records carry each value's length (values of any length up to the value size). */
    static final int VERSION_LENGTHS = 2;
    static final int SEGMENT_HEADER = 64;

    static final int RECORD_MAGIC = 0x4345524A;                // "JREC"
    static final int RECORD_HEADER = 40;
    static final byte PUT = 1;
    static final byte DELETE = 2;
    /** A record's body stays under this, so that replay reads it in one buffer and a batch's writes span several records. */
    static final int MAX_BODY = 4 << 20;

    private RecordFormat() {
    }

    static ByteBuffer little(int capacity) {
        return ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The size of a record body holding {@code count} writes of which {@code puts} carry a value of the value size. */
    static long bodyLength(long count, long puts, int keySize, int valueSize) {
        return align8(count) + count * keySize + puts * valueSize;
    }

    /**
     * The size of a record body that carries lengths: {@code count} writes of which {@code puts} carry
     * values of {@code valueBytes} in all.
     */
    static long bodyLengthWithLengths(long count, long puts, int keySize, long valueBytes) {
        return lengthsAt(count, keySize) + align8(4 * puts) + valueBytes;
    }

    /** Where a body's lengths (or, without lengths, its values) start. */
    static long lengthsAt(long count, int keySize) {
        return align8(count) + count * keySize;
    }

    static long align8(long n) {
        return (n + 7) & ~7L;
    }

    /** The most writes one record holds for these sizes (each put's length counted where records carry them). */
    static int maxWritesPerRecord(int keySize, int valueSize, boolean lengths) {
        return (int) Math.max(1, (MAX_BODY - (lengths ? 16 : 8)) / (1 + keySize + valueSize + (lengths ? 4 : 0)));
    }

    /**
     * A segment header: magic, version ({@link #VERSION_LENGTHS} where records carry lengths), key and
     * value size, first sequence number, the journal's identity, CRC.
     */
    static ByteBuffer segmentHeader(int keySize, int valueSize, boolean lengths, long firstSeq, long journalId) {
        ByteBuffer b = little(SEGMENT_HEADER);
        b.putLong(0, SEGMENT_MAGIC).putInt(8, lengths ? VERSION_LENGTHS : VERSION).putInt(12, keySize).putInt(16, valueSize)
                .putLong(24, firstSeq).putLong(32, journalId);
        b.putInt(60, Crc.of(b, 0, 60));
        return b;
    }

    /** Fills a record header (position 0 to 40 of {@code h}) for a body already written and checksummed. */
    static void recordHeader(ByteBuffer h, int count, long seq, int bodyLength, int puts, int bodyCrc,
                             CRC32C crc) {
        h.putInt(0, RECORD_MAGIC).putInt(4, count).putLong(8, seq).putInt(16, bodyLength).putInt(20, puts)
                .putInt(24, bodyCrc).putInt(28, 0);
        crc.reset();
        crc.update(h.clear().limit(32));
        h.clear();
        h.putInt(32, (int) crc.getValue()).putInt(36, 0);
    }
}
