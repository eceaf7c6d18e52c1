package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import org.gphash.Outcome;
import org.gphash.cli.PhaseTally;
import org.gphash.cli.ValueCodec;
import org.junit.jupiter.api.Test;

/**
 * The bench client's check of a batch's results (StreamRunner.check): every wrong outcome is counted,
 * and so is a wrong value where it samples one (the embedded key of 1 in 16 values read, every
 * byte of 1 in 256); values between the samples are not read, which is what keeps the client cheap.
 */
class ResultCheckTest {

    private static final int VS = 64;
    private static final int N = 1024;

    /** A batch of YCSB-C gets on loaded keys and the results a correct store gives it. */
    private record Run(OpBatch batch, OpResults results) {
    }

    private static Run correct() {
        return correct(ValueLengths.FIXED);
    }

    private static Run correct(ValueLengths lengths) {
        StreamGenerator g = new StreamGenerator(100_000, "uniform", 0.99, 7, 0);
        g.next(Workload.LOAD, 100_000);
        OpBatch batch = new OpBatch(8, VS, N, lengths);
        batch.fill(g.next(Workload.C, N), 0, N);
        OpResults results = new OpResults(VS, N, lengths);
        new ClientOnlyStore(new StoreConfig(Path.of("."), 8, VS, N, 7, lengths)).execute(batch, results);
        return new Run(batch, results);
    }

    private static PhaseTally check(Run r) {
        PhaseTally tally = new PhaseTally();
        StreamRunner.check(r.batch(), r.results(), new ValueCodec(VS), tally);
        return tally;
    }

    @Test
    void correctResultsPass() {
        PhaseTally t = check(correct());
        assertEquals(0, t.failures());
        assertEquals(N, t.reads);
    }

    @Test
    void everyWrongOutcomeIsCounted() {
        Run r = correct();
        for (int i = 3; i < N; i += 100) {
            r.results().codes().set(ValueLayout.JAVA_BYTE, i, Outcome.NOT_FOUND.code());
        }
        assertEquals(11, check(r).missing);
    }

    @Test
    void anotherKeysValueIsCaughtWhereSampled() {
        Run r = correct();
        r.results().values().set(ValueLayout.JAVA_LONG_UNALIGNED, 32L * VS, r.batch().id(33));  // value 32: sampled
        assertEquals(1, check(r).mismatches);
        Run s = correct();
        s.results().values().set(ValueLayout.JAVA_LONG_UNALIGNED, 33L * VS, s.batch().id(32));  // value 33: not read
        assertEquals(0, check(s).mismatches);
    }

    @Test
    void aTornValueIsCaughtWhereEveryByteIsChecked() {
        Run r = correct();
        long last = 256L * VS + VS - 1;  // value 256's last byte
        r.results().values().set(ValueLayout.JAVA_BYTE, last, (byte) ~r.results().values().get(ValueLayout.JAVA_BYTE, last));
        assertEquals(1, check(r).mismatches);
        Run s = correct();
        long other = 16L * VS + VS - 1;  // value 16: only its key is checked
        s.results().values().set(ValueLayout.JAVA_BYTE, other, (byte) ~s.results().values().get(ValueLayout.JAVA_BYTE, other));
        assertEquals(0, check(s).mismatches);
    }

    /** Values of mixed length: each read's length must be the one its version was written with. */
    @Test
    void aValueOfAnotherLengthIsCaughtWhereSampled() {
        Run r = correct(ValueLengths.MIXED);
        assertEquals(0, check(r).failures());
        byte[] value = r.results().value(32);   // value 32: sampled
        int other = value.length == VS ? VS - 1 : value.length + 1;
        r.results().setValue(32, Outcome.FOUND, java.util.Arrays.copyOf(value, other), 0, other);
        assertEquals(1, check(r).mismatches);
    }

    @Test
    void mixedLengthsStayWithinTheirBoundsAndCentreOnTheDesignsSizes() {
        long sum = 0;
        int n = 200_000;
        for (int i = 0; i < n; i++) {
            int length = ValueLengths.MIXED.of(i, i % 7, 4096);
            assertEquals(length, ValueLengths.MIXED.of(i, i % 7, 4096), "a function of key and version");
            org.junit.jupiter.api.Assertions.assertTrue(length >= ValueCodec.MIN_VALUE_SIZE && length <= 4096, "length " + length);
            sum += length;
        }
        double mean = (double) sum / n;
        org.junit.jupiter.api.Assertions.assertTrue(mean > 115 && mean < 145, "mean " + mean);
        assertEquals(4096, ValueLengths.FIXED.of(3, 4, 4096));
    }
}
