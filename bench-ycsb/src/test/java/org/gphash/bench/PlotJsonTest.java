package org.gphash.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

/** PlotJson reads back exactly what JsonReport writes (the GPU machine writes JSON, plots are drawn here). */
class PlotJsonTest {

    @Test
    void readsBackWhatJsonReportWrites(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        List<Measurement> rows = List.of(
                new Measurement("gphash-gpu", "C", 4096, 16, 2_000_000, 123_456_789, 1.53119e6, 29_244_169, 0.635783,
                        Double.NaN, 0),
                new Measurement("cpu-assisted", "load", 256, 2, 1000, 5000, 12.5, 77, 0.5, 0.25, 3));
        java.nio.file.Path file = dir.resolve("run.json");
        JsonReport.write(file, java.util.Map.of("benchmark", "test"), rows);
        String json = java.nio.file.Files.readString(file);
        List<Measurement> back = PlotJson.parse(json);
        assertEquals(rows.size(), back.size(), json);
        for (int i = 0; i < rows.size(); i++) {
            Measurement a = rows.get(i);
            Measurement b = back.get(i);
            assertEquals(a.system(), b.system());
            assertEquals(a.workload(), b.workload());
            assertEquals(a.batchSize(), b.batchSize());
            assertEquals(a.threads(), b.threads());
            assertEquals(a.operations(), b.operations());
            assertEquals(a.nanos(), b.nanos());
            assertEquals(a.meanBatchNanos(), b.meanBatchNanos(), a.meanBatchNanos() * 1e-5);
            assertEquals(a.p99BatchNanos(), b.p99BatchNanos());
            assertEquals(a.cacheHitRate(), b.cacheHitRate(), 1e-6);
            assertEquals(a.unexpected(), b.unexpected());
        }
    }
}
