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
        this.result = new BatchResult(valueSize, BATCH);
        this.ordered = engine.ordersOperationsOnAKey();
    }

    /**
     * Copies a value of {@code length} bytes from {@code from} at {@code at} to operation {@code op}'s
     * place in the batch; a shorter one is refused by an engine whose values all have the value size.
     */
    private void copyValue(MemorySegment from, long at, int op, int length) {
        MemorySegment.copy(from, at, batch.values(), (long) op * valueSize, length);
        if (length < valueSize) {
            if (!valueLengths) {
                throw new IllegalStateException("the journal holds a value of " + length + " bytes, shorter than the "
                        + "value size " + valueSize + ", and this engine takes values of the value size only: rebuild "
                        + "the pool as it was made (pool format 3, the CPU backend); nothing was replayed past it");
            }
            batch.setValueLength(op, length);
        }
    }

    /** Loads a checkpoint whole (it is checked chunk by chunk as it is read); returns what it says. */
    Checkpoint.Summary loadCheckpoint(Path file, long journalId) {
        return Checkpoint.read(file, keySize, valueSize, journalId, (count, keys, lengths, values) -> {
            long valueAt = 0;
            for (int at = 0; at < count; ) {
                int n = Math.min(BATCH - batch.size(), count - at);
                int base = batch.size();
                batch.setSize(base + n);
                batch.kinds().asSlice(base, n).fill((byte) OpKind.PUT.ordinal());
                MemorySegment.copy(keys, (long) at * keySize, batch.keys(), (long) base * keySize, (long) n * keySize);
                if (lengths == null) {
                    MemorySegment.copy(values, (long) at * valueSize, batch.values(), (long) base * valueSize,
                            (long) n * valueSize);
                } else {
                    for (int i = 0; i < n; i++) {
                        int length = lengths.get(ValueLayout.JAVA_INT_UNALIGNED, 4L * (at + i));
                        copyValue(values, valueAt, base + i, length);
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
        int base = batch.size();
        batch.setSize(base + r.count());
        MemorySegment.copy(r.keys(), 0, batch.keys(), (long) base * keySize, (long) r.count() * keySize);
        MemorySegment kinds = batch.kinds();
        int put = 0;
        long valueAt = 0;
        for (int i = 0; i < r.count(); i++) {
            if (r.kinds().get(ValueLayout.JAVA_BYTE, i) == RecordFormat.PUT) {
                kinds.set(ValueLayout.JAVA_BYTE, base + i, (byte) OpKind.PUT.ordinal());
                int length = r.length(put, valueSize);
                copyValue(r.values(), valueAt, base + i, length);
                valueAt += length;
                put++;
            } else {
                kinds.set(ValueLayout.JAVA_BYTE, base + i, (byte) OpKind.DELETE.ordinal());
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
                engine.put(k, values.asSlice((long) i * valueSize, batch.valueLength(i)));
            } else {
                engine.delete(k);
            }
        }
        batch.clear();
    }
}
