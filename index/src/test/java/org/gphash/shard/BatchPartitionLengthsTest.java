package org.gphash.shard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.junit.jupiter.api.Test;

/**
 * A batch of values of any length (format 3) split into shards' parts that are copied out (the path of
 * an engine that cannot run its part in place, as the GPU engine): each part's values and expected
 * values keep their lengths, and each result's value comes back to its position at its length.
 */
class BatchPartitionLengthsTest {

    private static final int VALUE = 32;
    private static final int N = 200;

    private static byte[] bytes(int length, int fill) {
        byte[] b = new byte[length];
        Arrays.fill(b, (byte) fill);
        return b;
    }

    @Test
    void partsAndResultsKeepEachValuesLength() {
        ShardFunction function = new ShardFunction(7, 3);
        BatchPartition p = new BatchPartition(function, 8, VALUE, true);
        Batch batch = Batch.create(8, VALUE, N, true);
        for (int i = 0; i < N; i++) {
            switch (i % 3) {
                case 0 -> batch.put(i, bytes(i % (VALUE + 1), i));
                case 1 -> batch.compareAndSet(i, bytes(i % 7, i + 1), bytes(i % 11, i + 2));
                default -> batch.get(i);
            }
        }
        p.prepare(N, 1);
        p.assign(batch, 0);
        p.place();
        p.list(0);
        BatchResult result = new BatchResult(VALUE, N);
        result.reset(batch);
        int seen = 0;
        for (int s = 0; s < function.shards(); s++) {
            if (p.size(s) == 0) {
                continue;
            }
            Batch part = p.copyOut(batch, s);
            BatchResult partResult = p.resultOf(s);
            MemorySegment list = p.positions(s);
            for (int j = 0; j < p.size(s); j++) {
                int i = list.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, j);
                assertEquals(batch.kind(i), part.kind(j));
                if (batch.kind(i).hasValue()) {
                    assertEquals(batch.valueLength(i), part.valueLength(j), "operation " + i + "'s value");
                    assertArrayEquals(batch.values().asSlice(batch.valueOffset(i), batch.valueLength(i)).toArray(ValueLayout.JAVA_BYTE),
                            part.values().asSlice(part.valueOffset(j), part.valueLength(j)).toArray(ValueLayout.JAVA_BYTE));
                }
                if (batch.kind(i) == OpKind.COMPARE_AND_SET) {
                    assertEquals(batch.expectedLength(i), part.expectedLength(j), "operation " + i + "'s expected value");
                    assertArrayEquals(batch.expectedValues().asSlice(batch.expectedOffset(i), batch.expectedLength(i))
                            .toArray(ValueLayout.JAVA_BYTE), part.expectedValues().asSlice(part.expectedOffset(j),
                            part.expectedLength(j)).toArray(ValueLayout.JAVA_BYTE));
                }
                // A shard's answer: found, a value of its own length.
                int length = (i * 5) % (VALUE + 1);
                partResult.setOutcome(j, Outcome.FOUND);
                partResult.putValue(j, MemorySegment.ofArray(bytes(length, i)), 0, length);
                seen++;
            }
            p.copyBack(result, s);
        }
        assertEquals(N, seen);
        for (int i = 0; i < N; i++) {
            int length = (i * 5) % (VALUE + 1);
            assertEquals(length, result.valueLength(i), "operation " + i);
            assertArrayEquals(bytes(length, i), result.value(i), "operation " + i);
        }
        // The same parts reused for a batch whose values all have the value size keep no length of the last,
        // and a batch whose values lie each in a place of the value size gives parts that do too.
        Batch full = Batch.create(8, VALUE, N, false);
        for (int i = 0; i < N; i++) {
            full.put(i, bytes(VALUE, i));
        }
        p.prepare(N, 1);
        p.assign(full, 0);
        p.place();
        p.list(0);
        for (int s = 0; s < function.shards(); s++) {
            Batch part = p.copyOut(full, s);
            assertEquals(false, part.valuesPacked(), "shard " + s + "'s part lies as its batch does");
            for (int j = 0; j < p.size(s); j++) {
                assertEquals(VALUE, part.valueLength(j), "shard " + s + ", operation " + j + " of its part");
            }
        }
    }
}
