package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Durability;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;

/**
 * Model-based properties: random sequences of operations run against an index and against a
 * {@link HashMap} model, comparing every return value, the size after every action, and the whole
 * content after every reopen and at the end.
 *
 * <p>The key space is small (ids 0..300, most actions on 0..31) so that inserts of existing keys,
 * updates, deletes of present keys and several operations on one key inside a batch are common.
 * Pools start at {@code initialCapacity(16)}, so resizes and heap growths happen in the middle of
 * sequences; {@link ForceResizes} additionally inserts fresh keys until at least one more resize has
 * completed.
 */
public class ModelProperties {

    static final long KEY_SPACE = 300;
    static final long HOT_KEYS = 31;
    /** Fresh keys of {@link ForceResizes} are numbered from here: never produced by the key arbitraries. */
    static final long FRESH_BASE = 1_000_000;
    /** {@link ForceResizes} does nothing once the table has this many slots. */
    static final long MAX_FORCED_CAPACITY = 12_000;

    // ------------------------------------------------------------------ actions

    /** How a single operation reaches the index: long keys, byte[] keys, or memory segments. */
    enum Api { LONG, BYTES, SEGMENT }

    sealed interface Action permits Single, BatchAction, CloseAndReopen, AbandonAndReopen, ForceResizes {
    }

    /**
     * One GET / PUT / INSERT / UPDATE / DELETE / COMPARE_AND_SET / COMPARE_AND_DELETE; a conditional
     * one expects the key's current value when {@code matches}, another value otherwise.
     */
    record Single(OpKind kind, long key, Api api, boolean matches) implements Action {
    }

    /**
     * A conditional operation with {@code matches} expects the value the key would have if every
     * earlier write of the batch to it took effect (so it matches unless one did not); another
     * value otherwise.
     */
    record BatchOp(OpKind kind, long key, boolean matches) {
    }

    /** A mixed batch, executed in one call; checked op by op against the model applied in order. */
    record BatchAction(List<BatchOp> ops) implements Action {
    }

    /** Clean close, then open() with the given geometry fields specified (or none). */
    record CloseAndReopen(boolean specifyGeometry) implements Action {
    }

    /** Crash simulation between operations: every completed write must survive. */
    record AbandonAndReopen() implements Action {
    }

    /** Inserts fresh keys until {@code resizes} more resizes have completed. */
    record ForceResizes(int resizes) implements Action {
    }

    @Provide
    Arbitrary<List<Action>> actions() {
        Arbitrary<Long> key = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.longs().between(0, HOT_KEYS)),
                Tuple.of(2, Arbitraries.longs().between(0, KEY_SPACE)));
        Arbitrary<Long> batchKey = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.longs().between(0, 3)),
                Tuple.of(1, Arbitraries.longs().between(0, KEY_SPACE)));
        Arbitrary<OpKind> kind = Arbitraries.of(OpKind.class);
        // READ_MODIFY_WRITE exists only in batches.
        Arbitrary<Boolean> matches = Arbitraries.of(true, true, false);
        Arbitrary<Action> single = Combinators.combine(kind.filter(k -> k != OpKind.READ_MODIFY_WRITE), key,
                Arbitraries.of(Api.class), matches).as(Single::new);
        Arbitrary<Action> batch = Combinators.combine(kind, batchKey, matches).as(BatchOp::new)
                .list().ofMinSize(1).ofMaxSize(20).map(BatchAction::new);
        Arbitrary<Action> reopen = Arbitraries.of(true, false).map(CloseAndReopen::new);
        Arbitrary<Action> abandon = Arbitraries.just(new AbandonAndReopen());
        Arbitrary<Action> resizes = Arbitraries.integers().between(1, 2).map(ForceResizes::new);
        Arbitrary<Action> action = Arbitraries.frequencyOf(
                Tuple.of(70, single),
                Tuple.of(12, batch),
                Tuple.of(3, reopen),
                Tuple.of(2, abandon),
                Tuple.of(2, resizes));
        return action.list().ofMinSize(30).ofMaxSize(200).withSizeDistribution(RandomDistribution.uniform());
    }

    // ------------------------------------------------------------------ properties

    @Property(tries = 80, edgeCases = EdgeCasesMode.NONE)
    void defaultGeometryLongKeysBehaveLikeAHashMap(@ForAll("actions") List<Action> actions) {
        Shape shape = new Shape(8, 128, 0, 0, 0);
        try (Run run = new Run(shape)) {
            run.execute(actions);
        }
    }

    /** Durability changes when writes reach the disk, never what the operations do (abandon: a process crash). */
    @Property(tries = 30, edgeCases = EdgeCasesMode.NONE)
    void everyDurabilityModeBehavesLikeAHashMap(@ForAll("actions") List<Action> actions,
                                                @ForAll Durability durability) {
        Shape shape = new Shape(8, 128, 0, 0, 0, durability);
        try (Run run = new Run(shape)) {
            run.execute(actions);
        }
    }

    /**
     * A sharded index (issue 30) is one map: every call, batches split across shards and merged back
     * included, behaves as on one pool, through reopen and crash recovery of every shard.
     */
    @Property(tries = 30, edgeCases = EdgeCasesMode.NONE)
    void shardedIndexBehavesLikeAHashMap(@ForAll("actions") List<Action> actions,
                                         @ForAll @net.jqwik.api.constraints.IntRange(min = 1, max = 4) int shards) {
        Shape shape = new Shape(8, 128, 0, 0, 0, Durability.PER_BATCH, shards);
        try (Run run = new Run(shape)) {
            run.execute(actions);
        }
    }

    @Property(tries = 40, edgeCases = EdgeCasesMode.NONE)
    void oneLevelTwoHashesFourSlotsWith16ByteKeys(@ForAll("actions") List<Action> actions) {
        Shape shape = new Shape(16, 24, 1, 2, 4);
        try (Run run = new Run(shape)) {
            run.execute(actions);
        }
    }

    @Property(tries = 40, edgeCases = EdgeCasesMode.NONE)
    void fourLevelsTwoHashesFourSlotsWith16ByteKeys(@ForAll("actions") List<Action> actions) {
        Shape shape = new Shape(16, 24, 4, 2, 4);
        try (Run run = new Run(shape)) {
            run.execute(actions);
        }
    }

    /**
     * Format 3 (issue 53, step 3: values framed in a heap of size classes, the class in the meta word;
     * one value size per pool) is the same map: every call, batch, reopen, crash and resize.
     */
    @Property(tries = 60, edgeCases = EdgeCasesMode.NONE)
    void formatThreeBehavesLikeAHashMap(@ForAll("actions") List<Action> actions, @ForAll Durability durability) {
        Shape shape = new Shape(8, 128, 0, 0, 0, durability).inFormat(3);
        try (Run run = new Run(shape)) {
            run.execute(actions);
        }
    }

    @Property(tries = 30, edgeCases = EdgeCasesMode.NONE)
    void formatThreeWithFourLevelsAnd16ByteKeys(@ForAll("actions") List<Action> actions) {
        Shape shape = new Shape(16, 24, 4, 2, 4).inFormat(3);
        try (Run run = new Run(shape)) {
            run.execute(actions);
        }
    }

    /**
     * Format 3's values of any length (issue 53, step 4): single calls and batches write values of 0 to
     * the value size bytes (each write's length its own, a quarter of them the whole size), and every
     * read, batch result, conditional compare (a value of another length is another value), reopen,
     * crash and resize gives back each value at its own length.
     */
    @Property(tries = 60, edgeCases = EdgeCasesMode.NONE)
    void formatThreeValuesOfAnyLengthBehaveLikeAHashMap(@ForAll("actions") List<Action> actions,
                                                        @ForAll Durability durability) {
        Shape shape = new Shape(8, 700, 0, 0, 0, durability).inFormat(3).withValueLengths();
        try (Run run = new Run(shape)) {
            assertTrue(run.index.valueLengths(), "a format 3 pool on the CPU backend takes values of any length");
            run.execute(actions);
        }
    }

    /**
     * The same with item checksums, which format 3 keeps in each value's header over its key, length and
     * bytes: every write computes and stores one, every read checks it.
     */
    @Property(tries = 30, edgeCases = EdgeCasesMode.NONE)
    void formatThreeValuesOfAnyLengthWithItemChecksums(@ForAll("actions") List<Action> actions,
                                                      @ForAll Durability durability) {
        Shape shape = new Shape(8, 700, 0, 0, 0, durability).inFormat(3).withValueLengths().withItemChecksums();
        try (Run run = new Run(shape)) {
            run.execute(actions);
        }
    }

    /** The same with values up to 200,000 bytes: the largest take runs of segments of their own. */
    @Property(tries = 12, edgeCases = EdgeCasesMode.NONE)
    void formatThreeValuesUpTo200KBehaveLikeAHashMap(@ForAll("actions") List<Action> actions) {
        Shape shape = new Shape(8, 200_000, 0, 0, 0, Durability.ON_CLOSE_OR_SYNC).inFormat(3).withValueLengths();
        try (Run run = new Run(shape)) {
            run.execute(actions);
        }
    }

    // ------------------------------------------------------------------ the model run

    /** Pool geometry; 0 for levels/hashes/slots means the builder's default. */
    record Shape(int keySize, int valueSize, int levels, int hashes, int slots, Durability durability, int shards,
                 int poolFormat, boolean valueLengths, boolean itemChecksums) {

        Shape(int keySize, int valueSize, int levels, int hashes, int slots, Durability durability, int shards,
              int poolFormat) {
            this(keySize, valueSize, levels, hashes, slots, durability, shards, poolFormat, false, false);
        }

        /** The same shape with single calls writing values of any length up to the value size (format 3). */
        Shape withValueLengths() {
            return new Shape(keySize, valueSize, levels, hashes, slots, durability, shards, poolFormat, true, itemChecksums);
        }

        /** The same shape, its pool keeping item checksums. */
        Shape withItemChecksums() {
            return new Shape(keySize, valueSize, levels, hashes, slots, durability, shards, poolFormat, valueLengths, true);
        }

        Shape(int keySize, int valueSize, int levels, int hashes, int slots) {
            this(keySize, valueSize, levels, hashes, slots, Durability.PER_BATCH);
        }

        Shape(int keySize, int valueSize, int levels, int hashes, int slots, Durability durability) {
            this(keySize, valueSize, levels, hashes, slots, durability, 0);
        }

        Shape(int keySize, int valueSize, int levels, int hashes, int slots, Durability durability, int shards) {
            this(keySize, valueSize, levels, hashes, slots, durability, shards, 0);
        }

        /** The same shape in pool format {@code version}. */
        Shape inFormat(int version) {
            return new Shape(keySize, valueSize, levels, hashes, slots, durability, shards, version);
        }

        GPHashIndex.Builder configure(GPHashIndex.Builder b, boolean geometry) {
            b.durability(durability);
            if (poolFormat > 0 && geometry) {
                b.poolFormat(poolFormat);  // on reopen too: open then checks the pool's format
            }
            if (shards > 0) {
                b.shards(shards);  // on reopen: must match the manifest's count
            }
            if (geometry) {
                b.keySize(keySize).valueSize(valueSize).itemChecksums(itemChecksums);
                if (levels > 0) {
                    b.levels(levels).hashes(hashes).slotsPerBucket(slots);
                }
            }
            return b;
        }

        /** Key bytes of key id {@code id}: little-endian long for 8-byte keys (the encoding of long keys). */
        byte[] key(long id) {
            byte[] k = new byte[keySize];
            for (int i = 0; i < Math.min(8, keySize); i++) {
                k[i] = (byte) (id >>> (8 * i));
            }
            // Wider keys: a second word derived from the id, so keys differ in both halves.
            long second = id * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L;
            for (int i = 8; i < keySize; i++) {
                k[i] = (byte) (second >>> (8 * (i % 8)));
            }
            return k;
        }
    }

    /** A value for the {@code counter}-th write, to key {@code key}: every write is distinguishable. */
    public static byte[] value(long key, long counter, int size) {
        byte[] v = new byte[size];
        long s = key * 0xBF58476D1CE4E5B9L + counter * 0x94D049BB133111EBL + size;
        for (int i = 0; i < size; i++) {
            if ((i & 7) == 0) {
                s = mix(s + i);
            }
            v[i] = (byte) (s >>> (8 * (i & 7)));
        }
        // The counter verbatim in the first bytes, so two writes never produce the same value.
        for (int i = 0; i < Math.min(8, size); i++) {
            v[i] = (byte) (counter >>> (8 * i));
        }
        return v;
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static final class Run implements AutoCloseable {
        final Shape shape;
        final TestPools pools = TestPools.create();
        final Path path;
        final Map<Long, byte[]> model = new HashMap<>();
        /** Every key id ever used, present or not: the full-content check reads them all. */
        final Set<Long> touched = new LinkedHashSet<>();
        GPHashIndex index;
        long writes;
        long nextFresh = FRESH_BASE;
        int step;

        Run(Shape shape) {
            this.shape = shape;
            this.path = pools.pool("model.pool");
            this.index = shape.configure(GPHashIndex.builder(path), true).initialCapacity(16).seed(7).create();
            for (long k = 0; k <= KEY_SPACE; k++) {
                touched.add(k);
            }
        }

        void execute(List<Action> actions) {
            for (Action a : actions) {
                step++;
                switch (a) {
                    case Single s -> single(s);
                    case BatchAction b -> batch(b);
                    case CloseAndReopen c -> closeAndReopen(c);
                    case AbandonAndReopen x -> abandonAndReopen();
                    case ForceResizes f -> forceResizes(f);
                }
                assertEquals(model.size(), index.stats().size(), () -> where(a) + ": stats().size() differs from the model");
            }
            checkContent("at the end");
            long resizes = index.stats().resizes();
            Statistics.label("actions").collect(actions.size() < 50 ? "<50" : actions.size() < 100 ? "50-99" : actions.size() < 150 ? "100-149" : "150-200");
            Statistics.label("resizes per sequence").collect(resizes == 0 ? "0" : resizes <= 2 ? "1-2" : resizes <= 5 ? "3-5" : "6+");
            Statistics.label("items at the end").collect(model.size() < 50 ? "<50" : model.size() < 200 ? "50-199" : "200+");
            closeAndReopen(new CloseAndReopen(false));
        }

        String where(Action a) {
            return "step " + step + " (" + a + ")";
        }

        /** A single call's value: of the value size, or, with {@link Shape#valueLengths}, mostly of another length. */
        byte[] nextValue(long key) {
            long n = ++writes;
            if (!shape.valueLengths()) {
                return value(key, n, shape.valueSize());
            }
            long r = mix(n * 31 + key);
            int length = (r & 3) == 0 ? shape.valueSize() : (int) Long.remainderUnsigned(r >>> 2, shape.valueSize() + 1);
            return value(key, n, length);
        }

        /** A batch's value: as a single call's (batches of an index of values of any length carry them too). */
        byte[] nextBatchValue(long key) {
            return nextValue(key);
        }

        void single(Single s) {
            long key = s.key();
            byte[] k = shape.key(key);
            Api api = s.api() == Api.LONG && shape.keySize() != 8 ? Api.BYTES : s.api();
            byte[] expectedOld = model.get(key);
            String what = where(s);
            if (s.kind().isConditional()) {
                byte[] expected = s.matches() && expectedOld != null ? expectedOld : nextValue(key);
                boolean matched = expectedOld != null && java.util.Arrays.equals(expectedOld, expected);
                if (s.kind() == OpKind.COMPARE_AND_SET) {
                    byte[] v = nextValue(key);
                    boolean r = api == Api.LONG ? index.compareAndSet(key, expected, v) : index.compareAndSet(k, expected, v);
                    assertEquals(matched, r, what + ": compareAndSet returns whether the value matched");
                    if (matched) {
                        model.put(key, v);
                    }
                } else {
                    boolean r = api == Api.LONG ? index.compareAndDelete(key, expected) : index.compareAndDelete(k, expected);
                    assertEquals(matched, r, what + ": compareAndDelete returns whether the value matched");
                    if (matched) {
                        model.remove(key);
                    }
                }
                assertValue(model.get(key), index.get(k), what + ": read-back after the operation");
                return;
            }
            switch (s.kind()) {
                case GET -> {
                    byte[] got = switch (api) {
                        case LONG -> index.get(key);
                        case BYTES -> index.get(k);
                        case SEGMENT -> {
                            byte[] out = new byte[shape.valueSize()];
                            int length = index.read(MemorySegment.ofArray(k), MemorySegment.ofArray(out));
                            yield length < 0 ? null : java.util.Arrays.copyOf(out, length);
                        }
                    };
                    assertValue(expectedOld, got, what);
                }
                case PUT -> {
                    byte[] v = nextValue(key);
                    boolean r = switch (api) {
                        case LONG -> index.put(key, v);
                        case BYTES -> index.put(k, v);
                        case SEGMENT -> index.put(MemorySegment.ofArray(k), MemorySegment.ofArray(v));
                    };
                    assertEquals(expectedOld == null, r, what + ": put returns whether the key was new");
                    model.put(key, v);
                }
                case INSERT -> {
                    byte[] v = nextValue(key);
                    boolean r = switch (api) {
                        case LONG -> index.insert(key, v);
                        case BYTES -> index.insert(k, v);
                        case SEGMENT -> index.insert(MemorySegment.ofArray(k), MemorySegment.ofArray(v));
                    };
                    assertEquals(expectedOld == null, r, what + ": insert returns whether the key was absent");
                    if (expectedOld == null) {
                        model.put(key, v);
                    }
                }
                case UPDATE -> {
                    byte[] v = nextValue(key);
                    boolean r = switch (api) {
                        case LONG -> index.update(key, v);
                        case BYTES -> index.update(k, v);
                        case SEGMENT -> index.update(MemorySegment.ofArray(k), MemorySegment.ofArray(v));
                    };
                    assertEquals(expectedOld != null, r, what + ": update returns whether the key was present");
                    if (expectedOld != null) {
                        model.put(key, v);
                    }
                }
                case DELETE -> {
                    boolean r = switch (api) {
                        case LONG -> index.delete(key);
                        case BYTES -> index.delete(k);
                        case SEGMENT -> index.delete(MemorySegment.ofArray(k));
                    };
                    assertEquals(expectedOld != null, r, what + ": delete returns whether the key was present");
                    model.remove(key);
                }
            }
            // The key's state right after the operation, through a read of another kind.
            assertValue(model.get(key), index.get(k), what + ": read-back after the operation");
        }

        void batch(BatchAction b) {
            Batch batch = index.newBatch(b.ops().size());
            List<byte[]> written = new ArrayList<>();
            List<byte[]> expectedValues = new ArrayList<>();
            Map<Long, byte[]> lastWritten = new HashMap<>(model);
            for (BatchOp op : b.ops()) {
                byte[] v = op.kind().hasValue() ? nextBatchValue(op.key()) : null;
                written.add(v);
                byte[] k = shape.key(op.key());
                if (op.kind().isConditional()) {
                    byte[] last = lastWritten.get(op.key());
                    byte[] e = op.matches() && last != null ? last : nextBatchValue(op.key());
                    expectedValues.add(e);
                    if (op.kind() == OpKind.COMPARE_AND_SET) {
                        batch.compareAndSet(k, e, v);
                    } else {
                        batch.compareAndDelete(k, e);
                    }
                } else {
                    expectedValues.add(null);
                    batch.add(op.kind(), k, v);
                }
                if (v != null) {
                    lastWritten.put(op.key(), v);
                }
            }
            BatchResult result = index.execute(batch);
            assertEquals(b.ops().size(), result.size(), where(b) + ": one result per operation");
            for (int i = 0; i < b.ops().size(); i++) {
                BatchOp op = b.ops().get(i);
                String what = where(b) + " op " + i + " " + op;
                byte[] old = model.get(op.key());
                byte[] v = written.get(i);
                Outcome expected = switch (op.kind()) {
                    case GET -> old != null ? Outcome.FOUND : Outcome.NOT_FOUND;
                    case PUT -> {
                        model.put(op.key(), v);
                        yield old == null ? Outcome.INSERTED : Outcome.UPDATED;
                    }
                    case INSERT -> {
                        if (old == null) {
                            model.put(op.key(), v);
                        }
                        yield old == null ? Outcome.INSERTED : Outcome.EXISTS;
                    }
                    case UPDATE -> {
                        if (old != null) {
                            model.put(op.key(), v);
                        }
                        yield old != null ? Outcome.UPDATED : Outcome.NOT_FOUND;
                    }
                    case DELETE -> {
                        model.remove(op.key());
                        yield old != null ? Outcome.DELETED : Outcome.NOT_FOUND;
                    }
                    case READ_MODIFY_WRITE -> {
                        if (old != null) {
                            model.put(op.key(), v);
                        }
                        yield old != null ? Outcome.REPLACED : Outcome.NOT_FOUND;
                    }
                    case COMPARE_AND_SET, COMPARE_AND_DELETE -> {
                        if (old == null) {
                            yield Outcome.NOT_FOUND;
                        }
                        if (!java.util.Arrays.equals(old, expectedValues.get(i))) {
                            yield Outcome.EXISTS;
                        }
                        if (op.kind() == OpKind.COMPARE_AND_SET) {
                            model.put(op.key(), v);
                            yield Outcome.UPDATED;
                        }
                        model.remove(op.key());
                        yield Outcome.DELETED;
                    }
                };
                Statistics.label("conditional outcomes").collect(op.kind().isConditional() ? expected : "not conditional");
                assertEquals(expected, result.outcome(i), what);
                if (op.kind() == OpKind.GET || op.kind() == OpKind.READ_MODIFY_WRITE) {
                    assertValue(old, result.value(i), what + ": value");
                } else {
                    assertNull(result.value(i), what + ": only a GET that found its key has a value");
                }
            }
            for (BatchOp op : b.ops()) {
                assertValue(model.get(op.key()), index.get(shape.key(op.key())), where(b) + ": after the batch, key " + op.key());
            }
        }

        void closeAndReopen(CloseAndReopen c) {
            long resizes = index.stats().resizes();
            index.close();
            index = shape.configure(GPHashIndex.builder(path), c.specifyGeometry()).open();
            RecoveryReport r = index.lastRecovery();
            String what = where(c);
            assertTrue(r.previousShutdownClean(), what + ": " + r);
            assertFalse(r.repairedAnything(), what + ": a clean close needs no repair: " + r);
            assertEquals(model.size(), r.items(), what + ": items found by recovery");
            assertEquals(model.size(), r.valueBlocksInUse(), what + ": value blocks in use after recovery");
            assertEquals(0, r.trailingBytesIgnored(), what);
            assertEquals(resizes, index.stats().resizes(), what + ": resize count is persistent");
            assertEquals(shape.keySize(), index.keySize());
            assertEquals(shape.valueSize(), index.valueSize());
            checkContent(what);
        }

        void abandonAndReopen() {
            index.engine().abandon();  // a crash: no clean shutdown, no further writes
            index = GPHashIndex.builder(path).open();
            RecoveryReport r = index.lastRecovery();
            String what = "step " + step + " (abandon and reopen)";
            assertFalse(r.previousShutdownClean(), what + ": " + r);
            assertEquals(0, r.insertSlotsCleared(), what + ": no insert was in flight: " + r);
            assertEquals(0, r.tornSlotsCleared(), what + ": " + r);
            assertEquals(0, r.duplicatesRemoved(), what + ": " + r);
            assertFalse(r.resizeResumed(), what + ": no resize was in flight: " + r);
            assertEquals(model.size(), r.items(), what + ": items found by recovery");
            checkContent(what);
        }

        void forceResizes(ForceResizes f) {
            // Each forced resize doubles the table; past this size more of them only cost time.
            if (index.stats().capacity() >= MAX_FORCED_CAPACITY) {
                return;
            }
            long target = index.stats().resizes() + f.resizes();
            List<Long> fresh = new ArrayList<>();
            int guard = 0;
            while (index.stats().resizes() < target) {
                if (++guard > 200_000) {
                    fail(where(f) + ": no resize after 200000 fresh inserts: " + index.stats());
                }
                long key = nextFresh++;
                touched.add(key);
                byte[] v = nextValue(key);
                boolean r = shape.keySize() == 8 ? index.insert(key, v) : index.insert(shape.key(key), v);
                assertTrue(r, where(f) + ": fresh key " + key + " must be new");
                model.put(key, v);
                fresh.add(key);
            }
            // Delete a third of them again (items that were moved by the resize included).
            for (int i = 0; i < fresh.size(); i += 3) {
                long key = fresh.get(i);
                assertTrue(index.delete(shape.key(key)), where(f) + ": delete fresh key " + key);
                model.remove(key);
            }
            for (long key : fresh) {
                assertValue(model.get(key), index.get(shape.key(key)), where(f) + ": fresh key " + key);
            }
        }

        void checkContent(String when) {
            for (long key : touched) {
                assertValue(model.get(key), index.get(shape.key(key)), when + ": content of key " + key);
            }
            assertEquals(model.size(), index.stats().size(), when + ": size");
        }

        static void assertValue(byte[] expected, byte[] actual, String what) {
            if (expected == null) {
                assertNull(actual, what + ": expected absent");
            } else {
                assertNotNull(actual, what + ": expected present");
                assertArrayEquals(expected, actual, what + ": value");
            }
        }

        @Override
        public void close() {
            try {
                if (index != null) {
                    index.close();
                }
            } finally {
                pools.close();
            }
        }
    }
}
