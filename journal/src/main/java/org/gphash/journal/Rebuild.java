package org.gphash.journal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.spi.Engine;

/**
 * Fills a new pool from a checkpoint and the journal after it: the checkpoint's entries as batches of
 * puts, then every journal record from the checkpoint's sequence number on as batches of its puts
 * and deletes, in order. Replaying a record is idempotent (it sets a key's value or removes it), so a
 * key the checkpoint caught mid-change ends as the journal says.
 */
final class Rebuild {

    /** Operations per batch: large enough for the GPU engine's rates, small enough for its buffers. */
    private static final int BATCH = 1 << 16;

    private final Engine engine;
    private final int keySize;
    private final int valueSize;
    private final Batch batch;
    private final BatchResult result;
    private final boolean ordered;
    /** Whether the engine takes values shorter than the value size (a journal of such values replays only into one that does). */
    private final boolean valueLengths;
    long entriesLoaded;
    long recordsReplayed;
    long operationsReplayed;
    long lastSeq = -1;

    Rebuild(Engine engine) {
        this.engine = engine;
        this.keySize = engine.geometry().keySize();
        this.valueSize = engine.geometry().valueSize();
        this.valueLengths = engine.valueLengths();
        this.batch = Batch.create(keySize, valueSize, BATCH, valueLengths);
        this.result = BatchResult.create(valueSize, BATCH, valueLengths);
        this.ordered = engine.ordersOperationsOnAKey();
    }

    /**
     * Appends a put of the key at {@code keyAt} in {@code keys} and the value of {@code length} bytes
     * at {@code valueAt} in {@code values}; a shorter one is refused by an engine whose values all have
     * the value size.
     */
    private void appendPut(MemorySegment keys, long keyAt, MemorySegment values, long valueAt, int length) {
        if (length < valueSize && !valueLengths) {
            throw new IllegalStateException("the journal holds a value of " + length + " bytes, shorter than the "
                    + "value size " + valueSize + ", and this engine takes values of the value size only: rebuild "
                    + "the pool as it was made (pool format 3, the CPU backend); nothing was replayed past it");
        }
        batch.add(OpKind.PUT, keys.asSlice(keyAt, keySize), values.asSlice(valueAt, length));
    }

    /** Loads a checkpoint whole (it is checked chunk by chunk as it is read); returns what it says. */
    Checkpoint.Summary loadCheckpoint(Path file, long journalId) {
        return Checkpoint.read(file, keySize, valueSize, journalId, (count, keys, lengths, values) -> {
            long valueAt = 0;
            for (int at = 0; at < count; ) {
                int n = Math.min(BATCH - batch.size(), count - at);
                if (lengths == null && !batch.valuesPacked()) {
                    // Values of the value size into a batch of such: its columns filled in place, in bulk.
                    int base = batch.size();
                    batch.setSize(base + n);
                    batch.kinds().asSlice(base, n).fill((byte) OpKind.PUT.ordinal());
                    MemorySegment.copy(keys, (long) at * keySize, batch.keys(), (long) base * keySize, (long) n * keySize);
                    MemorySegment.copy(values, (long) at * valueSize, batch.values(), (long) base * valueSize,
                            (long) n * valueSize);
                } else {
                    for (int i = 0; i < n; i++) {
                        int length = lengths == null ? valueSize : lengths.get(ValueLayout.JAVA_INT_UNALIGNED, 4L * (at + i));
                        appendPut(keys, (long) (at + i) * keySize, values, valueAt, length);
                        valueAt += length;
                    }
                }
                at += n;
                entriesLoaded += n;
                if (batch.size() == BATCH) {
                    flush();
                }
            }
        });
    }

    /** Replays one journal record. */
    void replay(JournalReader.Record r) {
        if (!ordered || batch.size() + r.count() > BATCH) {
            flush();
        }
        MemorySegment keys = r.keys();
        int put = 0;
        long valueAt = 0;
        for (int i = 0; i < r.count(); i++) {
            if (r.kinds().get(ValueLayout.JAVA_BYTE, i) == RecordFormat.PUT) {
                int length = r.length(put, valueSize);
                appendPut(keys, (long) i * keySize, r.values(), valueAt, length);
                valueAt += length;
                put++;
            } else {
                batch.add(OpKind.DELETE, keys.asSlice((long) i * keySize, keySize), null);
            }
        }
        recordsReplayed++;
        operationsReplayed += r.count();
        lastSeq = r.seq();
        if (!ordered) {
            flushOneByOne();
        }
    }

    /** Runs what is gathered. */
    void flush() {
        if (batch.size() == 0) {
            return;
        }
        engine.execute(batch, result);
        batch.clear();
    }

    /** For an engine that does not order a batch's operations on one key: one at a time. */
    private void flushOneByOne() {
        MemorySegment keys = batch.keys();
        MemorySegment values = batch.values();
        for (int i = 0; i < batch.size(); i++) {
            MemorySegment k = keys.asSlice((long) i * keySize, keySize);
            if (batch.kind(i) == OpKind.PUT) {
                engine.put(k, values.asSlice(batch.valueOffset(i), batch.valueLength(i)));
            } else {
                engine.delete(k);
            }
        }
        batch.clear();
    }
}
