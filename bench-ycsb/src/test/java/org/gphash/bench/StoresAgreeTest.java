package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.gphash.Outcome;
import org.gphash.cli.PhaseTally;
import org.gphash.cli.ValueCodec;
import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * Every system of a run, given the same small operation stream (every workload, 8- and 32-byte
 * keys, values of the value size and of mixed lengths), returns the same outcomes and the same values,
 * of the same lengths, as the GPHash CPU engine.
 */
class StoresAgreeTest {

    private TestPools pools;
    private Path dir;

    @AfterEach
    void cleanUp() throws Exception {
        if (pools != null) {
            pools.close();
        }
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"8, FIXED", "32, FIXED", "8, MIXED"})
    void baselinesAgreeWithTheEngine(int keySize, ValueLengths lengths) throws Exception {
        pools = TestPools.create();
        dir = pools.dir();
        List<String> systems = List.of("gphash-cpu", "cpu-assisted", "chm", "lmdb");
        List<List<String>> transcripts = new ArrayList<>();
        for (String system : systems) {
            Path d = java.nio.file.Files.createDirectory(dir.resolve(system));
            try (StoreUnderTest store = Systems.open(system, new StoreConfig(d, keySize, VALUE, 4000, 1, lengths))) {
                transcripts.add(transcript(store, keySize, lengths));
            }
        }
        if (lengths == ValueLengths.MIXED) {
            assertTrue(transcripts.get(0).stream().map(l -> l.split(" "))
                    .filter(f -> f.length > 5).map(f -> f[5]).distinct().count() > 20, "values of many lengths were read");
        }
        for (int s = 1; s < systems.size(); s++) {
            assertEquals(transcripts.get(0).size(), transcripts.get(s).size());
            for (int i = 0; i < transcripts.get(0).size(); i++) {
                assertEquals(transcripts.get(0).get(i), transcripts.get(s).get(i),
                        systems.get(s) + " differs from gphash-cpu at operation " + i);
            }
        }
    }

    private static final int VALUE = 64;

    /** Outcome and returned value of every operation of every workload, one batch of 100 at a time. */
    private static List<String> transcript(StoreUnderTest store, int keySize, ValueLengths lengths) {
        List<String> lines = new ArrayList<>();
        StreamGenerator g = new StreamGenerator(1000, "zipfian", 0.99, 3, 0);
        List<Workload> order = new ArrayList<>(List.of(Workload.LOAD));
        order.addAll(Workload.micro());
        order.addAll(Workload.macro().subList(1, Workload.macro().size()));
        OpBatch batch = new OpBatch(keySize, VALUE, 100, lengths);
        OpResults results = new OpResults(VALUE, 100, lengths);
        PhaseTally tally = new PhaseTally();
        for (Workload w : order) {
            OpStream s = g.next(w, 600);
            for (int from = 0; from < s.size(); from += 100) {
                batch.fill(s, from, Math.min(s.size(), from + 100));
                store.execute(batch, results);
                StreamRunner.check(batch, results, new ValueCodec(VALUE), tally);
                for (int i = 0; i < batch.size(); i++) {
                    Outcome o = results.outcome(i);
                    boolean hasValue = o == Outcome.FOUND || o == Outcome.REPLACED;
                    lines.add(w.label() + " " + batch.kind(i) + " " + batch.id(i) + " " + o
                            + (hasValue ? " " + java.util.Arrays.hashCode(results.value(i)) + " " + results.valueLength(i) : ""));
                }
            }
        }
        assertEquals(0, tally.failures(), store.name() + ": results differ from what the stream implies");
        return lines;
    }

    @Test
    void keyCodecFillsLongKeysFromTheId() {
        KeyCodec c = new KeyCodec(32);
        byte[] a = c.encode(1);
        byte[] b = c.encode(2);
        assertEquals(1, a[0]);
        assertEquals(32, a.length);
        assertArrayEquals(a, c.encode(1));
        org.junit.jupiter.api.Assertions.assertFalse(java.util.Arrays.equals(java.util.Arrays.copyOfRange(a, 8, 32),
                java.util.Arrays.copyOfRange(b, 8, 32)));
    }
}
