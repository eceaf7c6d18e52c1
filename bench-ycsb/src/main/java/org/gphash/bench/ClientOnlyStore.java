package org.gphash.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.gphash.Outcome;
import org.gphash.cli.ValueCodec;

/**
 * No store at all: answers every operation as the stream implies (a get of a loaded key finds its
 * value, written here from the key; a get of an absent key misses; every write succeeds) and keeps
 * nothing. What it measures is the benchmark client itself, generation, hand-over, results and
 * checks, plus writing each answer: the ceiling any store's figure in the same run is under, so that
 * a store's figure can be told from the client's ({@code --baselines client}).
 */
final class ClientOnlyStore implements StoreUnderTest {

    private final ValueCodec codec;
    private final int valueSize;
    private final ValueLengths lengths;
    /** Where each client thread makes a value of its own length before it goes to the results. */
    private final ThreadLocal<MemorySegment> scratches;

    ClientOnlyStore(StoreConfig config) {
        this.valueSize = config.valueSize();
        this.lengths = config.lengths();
        this.codec = new ValueCodec(valueSize);
        this.scratches = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(valueSize, 8));
    }

    @Override
    public String name() {
        return "client";
    }

    @Override
    public String description() {
        return "no store: the benchmark client alone, answering as the stream implies (its ceiling)";
    }

    @Override
    public void execute(OpBatch batch, OpResults results) {
        int n = batch.size();
        results.reset(n);
        MemorySegment kinds = batch.kinds();
        MemorySegment codes = results.codes();
        MemorySegment values = results.values();
        for (int i = 0; i < n; i++) {
            long id = batch.id(i);
            Outcome o = switch (org.gphash.OpKind.ofOrdinal(kinds.get(ValueLayout.JAVA_BYTE, i))) {
                case GET -> id >= StreamGenerator.ABSENT_BASE ? Outcome.NOT_FOUND : Outcome.FOUND;
                case PUT, UPDATE, COMPARE_AND_SET -> Outcome.UPDATED;
                case INSERT -> Outcome.INSERTED;
                case DELETE, COMPARE_AND_DELETE -> Outcome.DELETED;
                case READ_MODIFY_WRITE -> Outcome.REPLACED;
            };
            if (o == Outcome.FOUND || o == Outcome.REPLACED) {
                int length = lengths.of(id, 0, valueSize);
                if (length == valueSize && lengths == ValueLengths.FIXED) {
                    codec.encode(id, 0, values, (long) i * valueSize, length);   // in its place in the column
                } else {
                    MemorySegment scratch = scratches.get();
                    codec.encode(id, 0, scratch, 0, length);
                    results.setValue(i, o, scratch, 0, length);
                }
            }
            codes.set(ValueLayout.JAVA_BYTE, i, o.code());
        }
    }

    @Override
    public void close() {
    }
}
