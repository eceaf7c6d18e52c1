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
 */
final class RecordBody {

    private final int keySize;
    private final int valueSize;
    private final int maxWrites;
    /** Automatic: a body dropped with its journal, and the areas a growing body leaves behind, are freed by the GC. */
    private final Arena arena = Arena.ofAuto();
    private MemorySegment kinds;
    private MemorySegment keys;
    private MemorySegment values;
    private int capacity;
    private int count;
    private int puts;
    final ByteBuffer header = ByteBuffer.allocateDirect(RecordFormat.RECORD_HEADER).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer[] gather = new ByteBuffer[4];
    private int bodyCrc;

    RecordBody(int keySize, int valueSize) {
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.maxWrites = RecordFormat.maxWritesPerRecord(keySize, valueSize);
        grow(Math.min(64, maxWrites));
    }

    private void grow(int writes) {
        MemorySegment k = arena.allocate(RecordFormat.align8(writes), 8);
        MemorySegment ks = arena.allocate((long) writes * keySize, 8);
        MemorySegment vs = arena.allocate((long) writes * valueSize, 8);
        if (count > 0) {
            MemorySegment.copy(kinds, 0, k, 0, count);
            MemorySegment.copy(keys, 0, ks, 0, (long) count * keySize);
            MemorySegment.copy(values, 0, vs, 0, (long) puts * valueSize);
        }
        kinds = k;
        keys = ks;
        values = vs;
        capacity = writes;
    }

    void clear() {
        count = 0;
        puts = 0;
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

    /** Adds a put of the key at {@code keyAt} in {@code keySrc} with the value at {@code valueAt} in {@code valueSrc}. */
    void put(MemorySegment keySrc, long keyAt, MemorySegment valueSrc, long valueAt) {
        ensureRoom();
        kinds.set(ValueLayout.JAVA_BYTE, count, RecordFormat.PUT);
        MemorySegment.copy(keySrc, keyAt, keys, (long) count * keySize, keySize);
        MemorySegment.copy(valueSrc, valueAt, values, (long) puts * valueSize, valueSize);
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
                    count = run;
                    puts = run;
                    return i + run;   // the record is this run alone
                }
                if (count + run > capacity) {
                    grow((int) Math.min(maxWrites, Math.max(2L * capacity, count + run)));
                }
                kinds.asSlice(count, run).fill(RecordFormat.PUT);
                MemorySegment.copy(bkeys, (long) i * keySize, keys, (long) count * keySize, (long) run * keySize);
                MemorySegment.copy(bvalues, (long) i * valueSize, values, (long) puts * valueSize, (long) run * valueSize);
                count += run;
                puts += run;
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

    /** Reused for the body's and the header's checksums: a record allocates no checksum of its own. */
    private final CRC32C crc = new CRC32C();

    /** Checksums the body; the buffers {@link #stamp} returns are then what a write sends. */
    int seal() {
        int kindBytes = (int) RecordFormat.align8(count);
        kinds.asSlice(count, kindBytes - count).fill((byte) 0);
        gather[1] = kinds.asSlice(0, kindBytes).asByteBuffer();
        gather[2] = (keyView != null ? keyView : keys.asSlice(0, (long) count * keySize)).asByteBuffer();
        gather[3] = (valueView != null ? valueView : values.asSlice(0, (long) puts * valueSize)).asByteBuffer();
        crc.reset();
        for (int b = 1; b < 4; b++) {
            crc.update(gather[b]);   // moves the buffer's position: stamp rewinds it
        }
        bodyCrc = (int) crc.getValue();
        return bodyLength();
    }

    int bodyLength() {
        return (int) RecordFormat.bodyLength(count, puts, keySize, valueSize);
    }

    /** Stamps {@code seq} into the header; returns header and body as one gathering write. */
    ByteBuffer[] stamp(long seq) {
        RecordFormat.recordHeader(header, count, seq, bodyLength(), puts, bodyCrc, crc);
        gather[0] = header.clear();
        for (int b = 1; b < 4; b++) {
            gather[b].rewind();
        }
        return gather;
    }

    long bytes() {
        return RecordFormat.RECORD_HEADER + (long) bodyLength();
    }
}
