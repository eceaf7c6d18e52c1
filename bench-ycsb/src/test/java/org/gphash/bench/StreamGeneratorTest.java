package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;

import org.gphash.OpKind;
import org.gphash.cli.ZipfianGenerator;
import org.junit.jupiter.api.Test;

class StreamGeneratorTest {

    private static final int KEYS = 10_000;
    private static final int OPS = 100_000;

    private static StreamGenerator generator(String distribution) {
        StreamGenerator g = new StreamGenerator(KEYS, distribution, 0.99, 7, 0);
        g.next(Workload.LOAD, 0);
        return g;
    }

    @Test
    void zipfianSearchesHitLoadedKeysWithTheExpectedSkew() {
        StreamGenerator g = generator("zipfian");
        OpStream s = g.next(Workload.POSITIVE_SEARCH, OPS);
        int hottest = 0;
        for (int i = 0; i < s.size(); i++) {
            assertEquals(OpKind.GET, s.kind(i));
            assertTrue(s.id(i) >= 0 && s.id(i) < KEYS);
            hottest += s.id(i) == 0 ? 1 : 0;
        }
        double expected = new ZipfianGenerator(KEYS, 0.99).hottestProbability();
        assertEquals(expected, (double) hottest / OPS, 0.01, "share of the hottest key");
    }

    @Test
    void uniformSpreadsEvenly() {
        OpStream s = generator("uniform").next(Workload.POSITIVE_SEARCH, OPS);
        int lowHalf = 0;
        for (int i = 0; i < s.size(); i++) {
            lowHalf += s.id(i) < KEYS / 2 ? 1 : 0;
        }
        assertEquals(0.5, (double) lowHalf / OPS, 0.02);
    }

    @Test
    void workloadDReadsTheLatestKeysAndNeverOnesNotYetVisible() {
        StreamGenerator g = new StreamGenerator(KEYS, "zipfian", 0.99, 7, 1000);
        g.next(Workload.LOAD, 0);
        OpStream s = g.next(Workload.D, OPS);
        long inserted = KEYS;
        long[] insertedAfter = new long[s.size()];
        int reads = 0;
        int recent = 0;
        for (int i = 0; i < s.size(); i++) {
            if (s.kind(i) == OpKind.INSERT) {
                assertEquals(inserted++, s.id(i), "inserts take fresh ids in order");
            } else {
                assertEquals(OpKind.GET, s.kind(i));
                long visible = i >= 1000 ? insertedAfter[i - 1000] : KEYS;
                assertTrue(s.id(i) < visible, "read of id " + s.id(i) + " inserted less than 1000 ops earlier");
                reads++;
                recent += s.id(i) >= visible - 100 ? 1 : 0;
            }
            insertedAfter[i] = inserted;
        }
        assertEquals(0.95, (double) reads / OPS, 0.01);
        assertTrue(recent > reads * 0.4, "most reads go to the 100 newest keys: " + recent + " of " + reads);
    }

    @Test
    void mixesHaveTheirProportions() {
        StreamGenerator g = generator("zipfian");
        OpStream a = g.next(Workload.A, OPS);
        OpStream f = g.next(Workload.F, OPS);
        assertEquals(0.5, share(a, OpKind.UPDATE), 0.01);
        assertEquals(0.5, share(f, OpKind.READ_MODIFY_WRITE), 0.01);
        assertEquals(0.05, share(g.next(Workload.B, OPS), OpKind.UPDATE), 0.005);
    }

    @Test
    void negativeSearchesMissAndDeletesRemoveExactlyTheInsertedKeys() {
        StreamGenerator g = generator("zipfian");
        OpStream neg = g.next(Workload.NEGATIVE_SEARCH, 1000);
        for (int i = 0; i < neg.size(); i++) {
            assertTrue(neg.id(i) >= StreamGenerator.ABSENT_BASE);
        }
        OpStream ins = g.next(Workload.INSERT, 500);
        OpStream del = g.next(Workload.DELETE, 500);
        Set<Long> inserted = new HashSet<>();
        for (int i = 0; i < ins.size(); i++) {
            assertTrue(inserted.add(ins.id(i)));
            assertTrue(ins.id(i) >= KEYS);
        }
        Set<Long> deleted = new HashSet<>();
        for (int i = 0; i < del.size(); i++) {
            assertEquals(OpKind.DELETE, del.kind(i));
            deleted.add(del.id(i));
        }
        assertEquals(inserted, deleted);
    }

    @Test
    void theSameSeedGivesTheSameStream() {
        OpStream x = generator("zipfian").next(Workload.A, 5000);
        OpStream y = generator("zipfian").next(Workload.A, 5000);
        long[] xs = new long[5000];
        long[] ys = new long[5000];
        for (int i = 0; i < 5000; i++) {
            xs[i] = x.id(i) * 8 + x.kind(i).ordinal();
            ys[i] = y.id(i) * 8 + y.kind(i).ordinal();
        }
        assertArrayEquals(xs, ys);
    }

    @Test
    void workloadListsParseAndKeepRunOrder() {
        assertEquals(Workload.micro(), Workload.parseList("micro"));
        assertEquals(java.util.List.of(Workload.C, Workload.A, Workload.D), Workload.parseList("d,a,c"));
        assertThrows(IllegalArgumentException.class, () -> Workload.parseList("e"));
    }

    private static double share(OpStream s, OpKind kind) {
        int n = 0;
        for (int i = 0; i < s.size(); i++) {
            n += s.kind(i) == kind ? 1 : 0;
        }
        return (double) n / s.size();
    }
}
