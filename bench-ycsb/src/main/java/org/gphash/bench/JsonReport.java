package org.gphash.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.gphash.cli.Json;

/**
 * A run as JSON: what was run (so a result can be traced to its command) and one object per
 * measurement, written by the project's JSON writer ({@link Json}). {@link PlotJson} reads it back.
 */
final class JsonReport {

    private JsonReport() {
    }

    /** A YCSB run: its options and measurements. */
    static void write(Path file, BenchOptions o, List<Measurement> rows) throws IOException {
        Map<String, Object> options = new LinkedHashMap<>();
        options.put("keys", o.keys());
        options.put("microOps", o.microOps());
        options.put("macroOps", o.macroOps());
        options.put("keySize", o.keySize());
        options.put("valueSize", o.valueSize());
        options.put("valueLengths", o.valueLengths().name().toLowerCase(Locale.ROOT));
        options.put("threads", o.threads());
        options.put("distribution", o.distribution());
        options.put("theta", o.theta());
        options.put("seed", o.seed());
        options.put("backend", o.backend().name().toLowerCase(Locale.ROOT));
        options.put("cpus", Runtime.getRuntime().availableProcessors());
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("benchmark", "ycsb");
        doc.put("options", options);
        write(file, doc, rows);
    }

    /** {@code head}'s fields, then the measurements, into {@code file}. */
    static void write(Path file, Map<String, Object> head, List<Measurement> rows) throws IOException {
        Map<String, Object> doc = new LinkedHashMap<>(head);
        List<Object> list = new ArrayList<>();
        for (Measurement m : rows) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("system", m.system());
            r.put("workload", m.workload());
            r.put("batchSize", m.batchSize());
            r.put("threads", m.threads());
            r.put("operations", m.operations());
            r.put("nanos", m.nanos());
            r.put("opsPerSecond", m.opsPerSecond());
            r.put("meanBatchNanos", m.meanBatchNanos());
            r.put("p99BatchNanos", m.p99BatchNanos());
            r.put("loadFactor", m.loadFactor());
            r.put("cacheHitRate", m.cacheHitRate());
            r.put("unexpected", m.unexpected());
            list.add(r);
        }
        doc.put("measurements", list);
        if (file.getParent() != null) {
            Files.createDirectories(file.getParent());
        }
        Files.writeString(file, Json.write(doc) + "\n");
    }
}
