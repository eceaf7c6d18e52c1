package org.gphash.cuda.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.PoolFullException;
import org.junit.jupiter.api.Test;

/**
 * {@link ConditionalBatches} against one-by-one execution, with an engine faked by a plain map that
 * runs the six plain kinds serially (as the GPU engine's routes do, per key in batch order). Checks
 * that no conditional operation reaches the engine, that outcomes, values and the final state are
 * those of serial execution, and how many plain batches it takes. Runs in CI, without a GPU.
 */
class ConditionalBatchesTest {

    static final int KEY = 8;
    static final int VALUE = 8;

    /** One operation: a kind, a key among a few, and a value (and expected value) among a few. */
    record Op(OpKind kind, int key, int value, int expected) {
    }

    @Provide
    Arbitrary<List<Op>> batches() {
        Arbitrary<Op> op = Combinators.combine(Arbitraries.of(OpKind.class), Arbitraries.integers().between(0, 5),
                Arbitraries.integers().between(1, 3), Arbitraries.integers().between(1, 3)).as(Op::new);
        return op.list().ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 1500)
    void conditionalBatchesRunAsIfOneByOne(@ForAll("batches") List<Op> ops, @ForAll("batches") List<Op> before) {
        FakeEngine engine = new FakeEngine();
        Map<Integer, Integer> model = startFrom(before, engine.map);
        Batch batch = batch(ops);
        BatchResult result = new BatchResult(VALUE, ops.size());
        result.reset(ops.size());
        ConditionalBatches.execute(batch, result, engine);
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            Integer old = model.get(op.key());
            Outcome expected = serial(op, old, model);
            assertEquals(expected, result.outcome(i), "op " + i + " " + op + " of " + ops);
            if (expected == Outcome.FOUND || expected == Outcome.REPLACED) {
                assertArrayEquals(value(old), result.value(i), "op " + i + " " + op + ": value");
            } else {
                assertNull(result.value(i), "op " + i);
            }
            if (op.kind().isConditional()) {
                Statistics.label("conditional outcomes").collect(expected);
            }
        }
        assertEquals(model, engine.map, "the state after the batch");
        assertFalse(engine.sawConditional, "a conditional operation reached the engine");
        Statistics.label("plain batches").collect(Math.min(engine.batches, 6));
    }

    /**
     * The same on a batch of values of any length (packed, a format 3 pool's): value {@code v} is
     * {@code v} bytes of 7, so the values are prefixes of one another and a compare must take the
     * lengths too; every plain batch reaching the engine is packed, and each value read comes back at
     * its length.
     */
    @Property(tries = 800)
    void packedConditionalBatchesRunAsIfOneByOne(@ForAll("batches") List<Op> ops, @ForAll("batches") List<Op> before) {
        PackedFakeEngine engine = new PackedFakeEngine();
        Map<Integer, Integer> model = startFrom(before, engine.map);
        Batch batch = Batch.create(KEY, VALUE, ops.size(), true);
        for (Op op : ops) {
            byte[] k = ByteBuffer.allocate(KEY).putLong(op.key()).array();
            switch (op.kind()) {
                case COMPARE_AND_SET -> batch.compareAndSet(k, sevens(op.expected()), sevens(op.value()));
                case COMPARE_AND_DELETE -> batch.compareAndDelete(k, sevens(op.expected()));
                default -> batch.add(op.kind(), k, op.kind().hasValue() ? sevens(op.value()) : null);
            }
        }
        BatchResult result = BatchResult.create(VALUE, ops.size(), true);
        result.reset(batch);
        ConditionalBatches.execute(batch, result, engine);
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            Integer old = model.get(op.key());
            Outcome expected = serial(op, old, model);
            assertEquals(expected, result.outcome(i), "op " + i + " " + op + " of " + ops);
            if (expected == Outcome.FOUND || expected == Outcome.REPLACED) {
                assertArrayEquals(sevens(old), result.value(i), "op " + i + " " + op + ": the value at its length");
            }
        }
        assertEquals(model, engine.map, "the state after the batch");
        assertFalse(engine.sawConditional, "a conditional operation reached the engine");
        assertFalse(engine.sawFixed, "a plain batch of values of the value size reached the engine");
    }

    @Test
    void distinctConditionalKeysTakeTwoRoundTrips() {
        FakeEngine engine = new FakeEngine();
        engine.map.put(1, 1);
        engine.map.put(2, 2);
        Batch batch = batch(List.of(new Op(OpKind.COMPARE_AND_SET, 1, 5, 1), new Op(OpKind.PUT, 3, 3, 0),
                new Op(OpKind.COMPARE_AND_DELETE, 2, 0, 1), new Op(OpKind.GET, 1, 0, 0), new Op(OpKind.COMPARE_AND_SET, 4, 1, 1)));
        BatchResult result = new BatchResult(VALUE, 5);
        result.reset(5);
        ConditionalBatches.execute(batch, result, engine);
        assertEquals(2, engine.batches, "one batch of gets, one of plain operations");
        assertEquals(List.of(Outcome.UPDATED, Outcome.INSERTED, Outcome.EXISTS, Outcome.FOUND, Outcome.NOT_FOUND),
                outcomes(result));
        assertArrayEquals(value(5), result.value(3), "the get after the compare-and-set sees its value");
    }

    @Test
    void aConditionalOperationAfterAWriteToItsKeyStartsANewSegment() {
        FakeEngine engine = new FakeEngine();
        Batch batch = batch(List.of(new Op(OpKind.PUT, 1, 1, 0), new Op(OpKind.COMPARE_AND_SET, 1, 2, 1),
                new Op(OpKind.COMPARE_AND_SET, 1, 3, 2), new Op(OpKind.COMPARE_AND_DELETE, 1, 0, 2)));
        BatchResult result = new BatchResult(VALUE, 4);
        result.reset(4);
        ConditionalBatches.execute(batch, result, engine);
        assertEquals(List.of(Outcome.INSERTED, Outcome.UPDATED, Outcome.UPDATED, Outcome.EXISTS), outcomes(result));
        assertEquals(3, engine.map.get(1));
        assertEquals(7, engine.batches, "four segments: the put's alone (one batch), each conditional one's (two)");
    }

    @Test
    void aFailingSegmentKeepsTheOutcomesOfWhatRan() {
        FakeEngine engine = new FakeEngine();
        engine.map.put(1, 1);
        engine.failOnBatch = 4;  // the second segment's plain batch
        Batch batch = batch(List.of(new Op(OpKind.COMPARE_AND_SET, 1, 2, 9), new Op(OpKind.COMPARE_AND_SET, 1, 3, 1)));
        BatchResult result = new BatchResult(VALUE, 2);
        result.reset(2);
        assertThrows(PoolFullException.class, () -> ConditionalBatches.execute(batch, result, engine));
        assertEquals(List.of(Outcome.EXISTS, Outcome.NOT_APPLIED), outcomes(result));
        assertEquals(1, engine.map.get(1));
    }

    @Test
    void keyHashesTellKeysApart() {
        Batch batch = Batch.create(24, VALUE, 4);
        byte[] a = new byte[24];
        byte[] b = new byte[24];
        b[23] = 1;
        batch.get(a).get(b).get(a.clone());
        assertEquals(BatchKeys.hash(batch.keys(), 24, 0), BatchKeys.hash(batch.keys(), 24, 2));
        assertFalse(BatchKeys.hash(batch.keys(), 24, 0) == BatchKeys.hash(batch.keys(), 24, 1));
        BatchKeys.LongSet set = new BatchKeys.LongSet(3);
        set.add(7);
        set.add(7);
        set.add(-7);
        assertEquals(true, set.contains(7) && set.contains(-7) && !set.contains(0));
        set.clear();
        assertFalse(set.contains(7));
    }

    // ------------------------------------------------------------------ the serial model

    /** A state to start from, reached by the plain writes of {@code before}, in {@code engine}; {@return the model's copy} */
    private static Map<Integer, Integer> startFrom(List<Op> before, Map<Integer, Integer> engine) {
        Map<Integer, Integer> model = new HashMap<>();
        for (Op op : before) {
            if (!op.kind().isConditional() && op.kind().hasValue()) {
                engine.put(op.key(), op.value());
                model.put(op.key(), op.value());
            }
        }
        return model;
    }

    private static Outcome serial(Op op, Integer old, Map<Integer, Integer> model) {
        return switch (op.kind()) {
            case GET -> old != null ? Outcome.FOUND : Outcome.NOT_FOUND;
            case PUT -> {
                model.put(op.key(), op.value());
                yield old == null ? Outcome.INSERTED : Outcome.UPDATED;
            }
            case INSERT -> {
                if (old != null) {
                    yield Outcome.EXISTS;
                }
                model.put(op.key(), op.value());
                yield Outcome.INSERTED;
            }
            case UPDATE -> {
                if (old == null) {
                    yield Outcome.NOT_FOUND;
                }
                model.put(op.key(), op.value());
                yield Outcome.UPDATED;
            }
            case DELETE -> {
                model.remove(op.key());
                yield old == null ? Outcome.NOT_FOUND : Outcome.DELETED;
            }
            case READ_MODIFY_WRITE -> {
                if (old == null) {
                    yield Outcome.NOT_FOUND;
                }
                model.put(op.key(), op.value());
                yield Outcome.REPLACED;
            }
            case COMPARE_AND_SET, COMPARE_AND_DELETE -> {
                if (old == null) {
                    yield Outcome.NOT_FOUND;
                }
                if (old != op.expected()) {
                    yield Outcome.EXISTS;
                }
                if (op.kind() == OpKind.COMPARE_AND_SET) {
                    model.put(op.key(), op.value());
                    yield Outcome.UPDATED;
                }
                model.remove(op.key());
                yield Outcome.DELETED;
            }
        };
    }

    /** The six plain kinds, one by one over a map: what every route of the GPU engine computes. */
    static final class FakeEngine implements ConditionalBatches.PlainRunner {
        final Map<Integer, Integer> map = new HashMap<>();
        int batches;
        int failOnBatch = -1;
        boolean sawConditional;

        @Override
        public void run(Batch batch, BatchResult result) {
            batches++;
            // The engine's contract: the result comes reset to the batch's size (GpuEngine does so).
            assertEquals(batch.size(), result.size(), "the result is reset to the batch's size");
            if (batches == failOnBatch) {
                throw new PoolFullException("the fake engine is full", result, null);
            }
            for (int i = 0; i < batch.size(); i++) {
                OpKind kind = batch.kind(i);
                sawConditional |= kind.isConditional();
                int key = (int) ByteBuffer.wrap(batch.key(i)).getLong();
                int v = (int) batch.values().get(ValueLayout.JAVA_LONG_UNALIGNED, (long) i * VALUE);
                Integer old = map.get(key);
                Outcome o = serial(new Op(kind, key, v, 0), old, map);
                result.outcomeCodes().set(ValueLayout.JAVA_BYTE, i, o.code());
                if ((o == Outcome.FOUND || o == Outcome.REPLACED)) {
                    MemorySegment.copy(MemorySegment.ofArray(value(old)), 0, result.values(), (long) i * VALUE, VALUE);
                }
            }
        }
    }

    /** {@link FakeEngine} for packed batches: value {@code v} is {@link #sevens}{@code (v)}, told by its length. */
    static final class PackedFakeEngine implements ConditionalBatches.PlainRunner {
        final Map<Integer, Integer> map = new HashMap<>();
        boolean sawConditional;
        boolean sawFixed;

        @Override
        public void run(Batch batch, BatchResult result) {
            assertEquals(batch.size(), result.size(), "the result is reset to the batch's size");
            sawFixed |= !batch.valuesPacked() || !result.valuesPacked();
            for (int i = 0; i < batch.size(); i++) {
                OpKind kind = batch.kind(i);
                sawConditional |= kind.isConditional();
                int key = (int) ByteBuffer.wrap(batch.key(i)).getLong();
                int v = kind.hasValue() ? batch.valueLength(i) : 0;
                Integer old = map.get(key);
                Outcome o = serial(new Op(kind, key, v, 0), old, map);
                result.outcomeCodes().set(ValueLayout.JAVA_BYTE, i, o.code());
                if (o == Outcome.FOUND || o == Outcome.REPLACED) {
                    result.putValue(i, MemorySegment.ofArray(sevens(old)), 0, old);
                }
            }
        }
    }

    /** {@code v} bytes of 7: values that are prefixes of one another. */
    private static byte[] sevens(int v) {
        byte[] b = new byte[v];
        java.util.Arrays.fill(b, (byte) 7);
        return b;
    }

    // ------------------------------------------------------------------ helpers

    private static Batch batch(List<Op> ops) {
        Batch batch = Batch.create(KEY, VALUE, ops.size());
        for (Op op : ops) {
            byte[] k = ByteBuffer.allocate(KEY).putLong(op.key()).array();
            switch (op.kind()) {
                case COMPARE_AND_SET -> batch.compareAndSet(k, value(op.expected()), value(op.value()));
                case COMPARE_AND_DELETE -> batch.compareAndDelete(k, value(op.expected()));
                default -> batch.add(op.kind(), k, op.kind().hasValue() ? value(op.value()) : null);
            }
        }
        return batch;
    }

    private static byte[] value(int v) {
        byte[] b = new byte[VALUE];
        MemorySegment.ofArray(b).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, v);
        return b;
    }

    private static List<Outcome> outcomes(BatchResult result) {
        List<Outcome> out = new ArrayList<>();
        for (int i = 0; i < result.size(); i++) {
            out.add(result.outcome(i));
        }
        return out;
    }
}
