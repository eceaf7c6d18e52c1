package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.gphash.Backend;
import org.gphash.OpKind;
import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TraceGeneratorsTest {

    private TestPools pools;
    private Path dir;

    @AfterEach
    void cleanUp() throws Exception {
        if (pools != null) {
            pools.close();
        }
    }

    @Test
    void pageRankOnTheEngineMatchesThePlainComputation() throws Exception {
        pools = TestPools.create();
        dir = pools.dir();
        Graph g = Graph.rmat(8, 8, 5);
        assertEquals(256, g.vertices);
        assertEquals(2048, g.edges());
        double[] ranks;
        try (StoreUnderTest store = new GPHashStore(new StoreConfig(dir, 8, PageRankTrace.VALUE_SIZE, 256, 1), Backend.CPU)) {
            ranks = PageRankTrace.run(g, store, 4, 0.85, 50, null);
        }
        assertArrayEquals(PageRankTrace.reference(g, 4, 0.85, 50), ranks, 0.0);
        // R-MAT is skewed: the top vertex has many times the average in-degree.
        int maxIn = 0;
        for (int v = 0; v < g.vertices; v++) {
            maxIn = Math.max(maxIn, g.inOffsets[v + 1] - g.inOffsets[v]);
        }
        assertTrue(maxIn > 4 * 8, "max in-degree " + maxIn);
    }

    @Test
    void edgeListsParseAndBadLinesAreNamed() throws Exception {
        pools = TestPools.create();
        dir = pools.dir();
        Path edges = dir.resolve("g.txt");
        Files.writeString(edges, "# comment\n0 1\n1\t2\n2 0\n3 0\n");
        Graph g = Graph.edgeList(edges);
        assertEquals(4, g.vertices);
        assertEquals(4, g.edges());
        assertEquals(2, g.inOffsets[1] - g.inOffsets[0]);
        Files.writeString(edges, "0 1\n1 x\n");
        IOException e = assertThrows(IOException.class, () -> Graph.edgeList(edges));
        assertTrue(e.getMessage().contains("line 2"), e.getMessage());
    }

    /**
     * The DLRM trace, its rows of one width or (issue 53) of a width per table: each row inserted once,
     * every sample looked up, and two systems replaying it answer alike (with mixed widths, every
     * found value's length in the digest too).
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(ValueLengths.class)
    void dlrmTraceInsertsEachRowOnceThenLooksUpEverySampleAndReplaysAlike(ValueLengths lengths) throws Exception {
        pools = TestPools.create();
        dir = pools.dir();
        Path trace = dir.resolve("dlrm.trace");
        PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        DlrmTrace.main(new String[] {"--samples", "300", "--batch", "64", "--scale", "0.001", "--updates",
                "--value-lengths", lengths.name().toLowerCase(java.util.Locale.ROOT), "--out", trace.toString()}, quiet);
        long inserts = 0;
        long gets = 0;
        long updates = 0;
        int valueSize;
        java.util.Set<Integer> widths = new java.util.HashSet<>();
        try (TraceReader r = new TraceReader(trace)) {
            valueSize = r.header().valueSize();
            assertEquals(lengths == ValueLengths.MIXED, r.header().lengths());
            if (lengths == ValueLengths.FIXED) {
                assertEquals(CriteoKaggle.VALUE_SIZE, valueSize);
            }
            assertEquals("dlrm", r.header().label());
            OpBatch b = new OpBatch(8, valueSize, 16, lengths);
            while (r.next(b)) {
                for (int i = 0; i < b.size(); i++) {
                    if (b.kind(i).hasValue()) {
                        widths.add(b.valueLength(i));
                    }
                    inserts += b.kind(i) == OpKind.INSERT ? 1 : 0;
                    gets += b.kind(i) == OpKind.GET ? 1 : 0;
                    updates += b.kind(i) == OpKind.UPDATE ? 1 : 0;
                }
            }
        }
        assertEquals(300L * CriteoKaggle.SPARSE_FEATURES, gets);
        assertTrue(inserts > 26 && inserts < gets, "rows created: " + inserts);
        assertTrue(updates >= inserts, "every batch writes back the rows it read");
        assertEquals(lengths == ValueLengths.FIXED, widths.size() == 1, "row widths: " + widths);
        // Replayed on two systems, every operation answers alike.
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            long[] digests = new long[2];
            List<String> systems = List.of("gphash-cpu", "chm");
            for (int s = 0; s < 2; s++) {
                Path d = Files.createDirectory(dir.resolve(systems.get(s)));
                try (StoreUnderTest store = Systems.open(systems.get(s), new StoreConfig(d, 8, valueSize,
                        inserts, 1, lengths))) {
                    Replay.Result r = Replay.replay(trace, store, 2, pool, org.gphash.cli.Progress.NONE, Long.MAX_VALUE);
                    assertEquals(inserts + gets + updates, r.tally.operations());
                    assertEquals(gets, r.outcomes[org.gphash.Outcome.FOUND.ordinal()], "every lookup finds its row");
                    digests[s] = r.digest;
                }
            }
            assertEquals(digests[0], digests[1]);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void criteoLinesBecomeTwentySixKeys() throws Exception {
        pools = TestPools.create();
        dir = pools.dir();
        Path log = dir.resolve("train.txt");
        String dense = "1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13";
        StringBuilder cats = new StringBuilder();
        for (int f = 0; f < 26; f++) {
            cats.append('\t').append(f == 3 ? "" : Integer.toHexString(0x68fd1e64 + f));
        }
        Files.writeString(log, "0\t" + dense + cats + "\n1\t" + dense + cats + "\n");
        Path trace = dir.resolve("c.trace");
        PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        DlrmTrace.main(new String[] {"--criteo", log.toString(), "--out", trace.toString()}, quiet);
        try (TraceReader r = new TraceReader(trace)) {
            OpBatch b = new OpBatch(8, CriteoKaggle.VALUE_SIZE, 16);
            assertTrue(r.next(b));
            assertEquals(26, b.size(), "the first sample's 26 rows are created");
            assertTrue(r.next(b));
            assertEquals(52, b.size(), "both samples are looked up");
        }
        Files.writeString(log, "0\t1\t2\n");
        IOException e = assertThrows(IOException.class, () -> DlrmTrace.main(new String[] {"--criteo", log.toString(),
                "--out", trace.toString()}, quiet));
        assertTrue(e.getMessage().contains("line 1"), e.getMessage());
    }
}
