package org.gphash.journal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;

/**
 * One record's writes while a thread gathers them (kinds, keys and values in three areas, written
 * out with one gathering write), reused from a pool: a thread journaling a call takes one, fills it
 * outside the journal's lock, and the journal only stamps the sequence number and writes it.
 *
 * <p>What a write's effect is comes from its outcome, not its kind: INSERTED, UPDATED and REPLACED
 * stored the operation's value (a put, an insert or update that applied, a read-modify-write, a
 * compare-and-set that matched), DELETED removed the key; every other outcome changed nothing and is
 * not journaled.
 *
 * <p>A body of a journal whose records carry lengths ({@link RecordFormat#VERSION_LENGTHS}) keeps each
 * put's value length in a fourth area and packs the values at their lengths.
 */
final class RecordBody {

    private final int keySize;
    private final int valueSize;
    /** Whether each put's length is journaled, its value packed at it (else every value has the value size). */
    private final boolean lengths;
    private final int maxWrites;
    /** Automatic: a body dropped with its journal, and the areas a growing body leaves behind, are freed by the GC. */
    private final Arena arena = Arena.ofAuto();
    private MemorySegment kinds;
    private MemorySegment keys;
    private MemorySegment values;
    /** Each put's value length, where {@link #lengths}. */
    private MemorySegment lengthArea;
    private int capacity;
    private int count;
    private int puts;
    /** The values' bytes: {@code puts * valueSize} without lengths. */
    private long valueBytes;
    final ByteBuffer header = ByteBuffer.allocateDirect(RecordFormat.RECORD_HEADER).order(ByteOrder.LITTLE_ENDIAN);
    /** Header, kinds, keys, (lengths,) values: the parts of one gathering write. */
    private final ByteBuffer[] gather;
    private int bodyCrc;

    RecordBody(int keySize, int valueSize, boolean lengths) {
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.lengths = lengths;
        this.maxWrites = RecordFormat.maxWritesPerRecord(keySize, valueSize, lengths);
        this.gather = new ByteBuffer[lengths ? 5 : 4];
        grow(Math.min(64, maxWrites));
    }

    private void grow(int writes) {
        MemorySegment k = arena.allocate(RecordFormat.align8(writes), 8);
        MemorySegment ks = arena.allocate((long) writes * keySize, 8);
        MemorySegment vs = arena.allocate((long) writes * valueSize, 8);
        MemorySegment ls = lengths ? arena.allocate(RecordFormat.align8(4L * writes), 8) : null;
        if (count > 0) {
            MemorySegment.copy(kinds, 0, k, 0, count);
            MemorySegment.copy(keys, 0, ks, 0, (long) count * keySize);
            MemorySegment.copy(values, 0, vs, 0, valueBytes);
            if (lengths) {
                MemorySegment.copy(lengthArea, 0, ls, 0, 4L * puts);
            }
        }
        kinds = k;
        keys = ks;
        values = vs;
        lengthArea = ls;
        capacity = writes;
    }

    void clear() {
        count = 0;
        puts = 0;
        valueBytes = 0;
        keyView = null;
        valueView = null;
    }

    /**
     * A run of puts that makes a whole record is written from the batch's own columns (these views)
     * rather than copied here first: a batch of 2^20 puts would otherwise copy 140 MB once more.
     */
    private MemorySegment keyView;
    private MemorySegment valueView;
    /** Runs shorter than this are copied: for them a copy is cheaper than a record of their own. */
    private static final int BORROW_MIN = 256;

    int count() {
        return count;
    }

    boolean full() {
        return count == maxWrites;
    }

    /** The journaled effect of an operation that ended with {@code outcome}: PUT, DELETE or 0 (none). */
    static byte effectOf(byte outcome) {
        if (outcome == Outcome.INSERTED.code() || outcome == Outcome.UPDATED.code() || outcome == Outcome.REPLACED.code()) {
            return RecordFormat.PUT;
        }
        return outcome == Outcome.DELETED.code() ? RecordFormat.DELETE : 0;
    }

    /**
     * Adds a put of the key at {@code keyAt} in {@code keySrc} with the value of {@code length} bytes at
     * {@code valueAt} in {@code valueSrc} (the value size, or less where this body carries lengths).
     */
    void put(MemorySegment keySrc, long keyAt, MemorySegment valueSrc, long valueAt, int length) {
        if (length != valueSize && !(lengths && length >= 0 && length < valueSize)) {
            throw new IllegalArgumentException("a value of " + length + " bytes in a journal of " + valueSize + "-byte values"
                    + (lengths ? "" : " (this journal's engine takes values of the value size only)"));
        }
        ensureRoom();
        kinds.set(ValueLayout.JAVA_BYTE, count, RecordFormat.PUT);
        MemorySegment.copy(keySrc, keyAt, keys, (long) count * keySize, keySize);
        MemorySegment.copy(valueSrc, valueAt, values, valueBytes, length);
        if (lengths) {
            lengthArea.set(ValueLayout.JAVA_INT_UNALIGNED, 4L * puts, length);
        }
        valueBytes += length;
        count++;
        puts++;
    }

    /** Adds a delete of the key at {@code keyAt} in {@code keySrc}. */
    void delete(MemorySegment keySrc, long keyAt) {
        ensureRoom();
        kinds.set(ValueLayout.JAVA_BYTE, count, RecordFormat.DELETE);
        MemorySegment.copy(keySrc, keyAt, keys, (long) count * keySize, keySize);
        count++;
    }

    private void ensureRoom() {
        if (count == capacity) {
            if (capacity == maxWrites) {
                throw new IllegalStateException("record full");
            }
            grow((int) Math.min(maxWrites, 2L * capacity));
        }
    }

    /** The journaled effect of a batch operation of kind {@code kind} that is sure to take effect as it says (a put, a delete), else 0. */
    static byte effectOfKind(byte kind) {
        return kind == OpKind.PUT.ordinal() ? RecordFormat.PUT : kind == OpKind.DELETE.ordinal() ? RecordFormat.DELETE : 0;
    }

    private static byte effect(MemorySegment column, boolean byKind, int i) {
        byte b = column.get(ValueLayout.JAVA_BYTE, i);
        return byKind ? effectOfKind(b) : effectOf(b);
    }

    /**
     * Adds the effects of operations {@code from} onward of {@code batch} until the record is full;
     * returns where it stopped. With {@code result} the effects come from the outcomes (a batch that
     * ran); with null from the kinds alone (a batch of puts and deletes journaled while it runs: a
     * put sets its value whatever it finds, a delete of an absent key changes nothing on replay).
     * A run of puts is copied in bulk, or borrowed from the batch's columns.
     */
    int addEffects(Batch batch, BatchResult result, int from) {
        boolean byKind = result == null;
        MemorySegment codes = byKind ? batch.kinds() : result.outcomeCodes();
        MemorySegment bkeys = batch.keys();
        MemorySegment bvalues = batch.values();
        int n = batch.size();
        int i = from;
        if (batch.valuesPacked()) {
            // Values of their own lengths (a batch of an index whose values have any): one at a time.
            for (; i < n && count < maxWrites; i++) {
                byte e = effect(codes, byKind, i);
                if (e == RecordFormat.PUT) {
                    put(bkeys, (long) i * keySize, bvalues, batch.valueOffset(i), batch.valueLength(i));
                } else if (e == RecordFormat.DELETE) {
                    delete(bkeys, (long) i * keySize);
                }
            }
            return i;
        }
        while (i < n && count < maxWrites) {
            byte e = effect(codes, byKind, i);
            if (e == RecordFormat.PUT) {
                // A run of puts: one copy of its keys and one of its values.
                int run = 1;
                int room = Math.min(maxWrites - count, n - i);
                while (run < room && effect(codes, byKind, i + run) == RecordFormat.PUT) {
                    run++;
                }
                if (count == 0 && run >= BORROW_MIN) {
                    if (run > capacity) {
                        grow((int) Math.min(maxWrites, run));
                    }
                    kinds.asSlice(0, run).fill(RecordFormat.PUT);
                    keyView = bkeys.asSlice((long) i * keySize, (long) run * keySize);
                    valueView = bvalues.asSlice((long) i * valueSize, (long) run * valueSize);
                    fullLengths(0, run);
                    count = run;
                    puts = run;
                    valueBytes = (long) run * valueSize;
                    return i + run;   // the record is this run alone
                }
                if (count + run > capacity) {
                    grow((int) Math.min(maxWrites, Math.max(2L * capacity, count + run)));
                }
                kinds.asSlice(count, run).fill(RecordFormat.PUT);
                MemorySegment.copy(bkeys, (long) i * keySize, keys, (long) count * keySize, (long) run * keySize);
                MemorySegment.copy(bvalues, (long) i * valueSize, values, valueBytes, (long) run * valueSize);
                fullLengths(puts, run);
                count += run;
                puts += run;
                valueBytes += (long) run * valueSize;
                i += run;
            } else {
                if (e == RecordFormat.DELETE) {
                    delete(bkeys, (long) i * keySize);
                }
                i++;
            }
        }
        return i;
    }

    /** Puts {@code from} to {@code from + run} have values of the value size (where this body carries lengths). */
    private void fullLengths(int from, int run) {
        if (lengths) {
            for (int p = from; p < from + run; p++) {
                lengthArea.set(ValueLayout.JAVA_INT_UNALIGNED, 4L * p, valueSize);
            }
        }
    }

    /** Reused for the body's and the header's checksums: a record allocates no checksum of its own. */
    private final CRC32C crc = new CRC32C();

    /** Checksums the body; the buffers {@link #stamp} returns are then what a write sends. */
    int seal() {
        int kindBytes = (int) RecordFormat.align8(count);
        kinds.asSlice(count, kindBytes - count).fill((byte) 0);
        gather[1] = kinds.asSlice(0, kindBytes).asByteBuffer();
        gather[2] = (keyView != null ? keyView : keys.asSlice(0, (long) count * keySize)).asByteBuffer();
        if (lengths) {
            int lengthBytes = (int) RecordFormat.align8(4L * puts);
            lengthArea.asSlice(4L * puts, lengthBytes - 4L * puts).fill((byte) 0);
            gather[3] = lengthArea.asSlice(0, lengthBytes).asByteBuffer();
        }
        gather[gather.length - 1] = (valueView != null ? valueView : values.asSlice(0, valueBytes)).asByteBuffer();
        crc.reset();
        for (int b = 1; b < gather.length; b++) {
            crc.update(gather[b]);   // moves the buffer's position: stamp rewinds it
        }
        bodyCrc = (int) crc.getValue();
        return bodyLength();
    }

    int bodyLength() {
        return (int) (lengths ? RecordFormat.bodyLengthWithLengths(count, puts, keySize, valueBytes)
                : RecordFormat.bodyLength(count, puts, keySize, valueSize));
    }

    /** Stamps {@code seq} into the header; returns header and body as one gathering write. */
    ByteBuffer[] stamp(long seq) {
        RecordFormat.recordHeader(header, count, seq, bodyLength(), puts, bodyCrc, crc);
        gather[0] = header.clear();
        for (int b = 1; b < gather.length; b++) {
            gather[b].rewind();
        }
        return gather;
    }

    long bytes() {
        return RecordFormat.RECORD_HEADER + (long) bodyLength();
    }
}
