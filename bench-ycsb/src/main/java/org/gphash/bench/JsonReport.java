package org.gphash.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The run as JSON: the options (so a result can be traced to its command) and one object per
 * measurement. Written by hand: the format is flat and a JSON library would be a dependency for
 * forty lines.
 */
final class JsonReport {

    private JsonReport() {
    }

    static void write(Path file, BenchOptions o, List<Measurement> rows) throws IOException {
        StringBuilder sb = new StringBuilder();
        sb.append("{\n  \"benchmark\": \"ycsb\",\n  \"options\": {");
        sb.append("\"keys\": ").append(o.keys())
                .append(", \"microOps\": ").append(o.microOps())
                .append(", \"macroOps\": ").append(o.macroOps())
                .append(", \"keySize\": ").append(o.keySize())
                .append(", \"valueSize\": ").append(o.valueSize())
                .append(", \"threads\": ").append(o.threads())
                .append(", \"distribution\": ").append(str(o.distribution()))
                .append(", \"theta\": ").append(num(o.theta()))
                .append(", \"seed\": ").append(o.seed())
                .append(", \"backend\": ").append(str(o.backend().name().toLowerCase(Locale.ROOT)))
                .append(", \"cpus\": ").append(Runtime.getRuntime().availableProcessors())
                .append("},\n");
        appendMeasurements(sb, rows);
        sb.append("}\n");
        if (file.getParent() != null) {
            Files.createDirectories(file.getParent());
        }
        Files.writeString(file, sb);
    }

    static void appendMeasurements(StringBuilder sb, List<Measurement> rows) {
        sb.append("  \"measurements\": [\n");
        for (int i = 0; i < rows.size(); i++) {
            Measurement m = rows.get(i);
            sb.append("    {\"system\": ").append(str(m.system()))
                    .append(", \"workload\": ").append(str(m.workload()))
                    .append(", \"batchSize\": ").append(m.batchSize())
                    .append(", \"threads\": ").append(m.threads())
                    .append(", \"operations\": ").append(m.operations())
                    .append(", \"nanos\": ").append(m.nanos())
                    .append(", \"opsPerSecond\": ").append(num(m.opsPerSecond()))
                    .append(", \"meanBatchNanos\": ").append(num(m.meanBatchNanos()))
                    .append(", \"p99BatchNanos\": ").append(m.p99BatchNanos())
                    .append(", \"loadFactor\": ").append(num(m.loadFactor()))
                    .append(", \"cacheHitRate\": ").append(num(m.cacheHitRate()))
                    .append(", \"unexpected\": ").append(m.unexpected())
                    .append(i + 1 < rows.size() ? "},\n" : "}\n");
        }
        sb.append("  ]\n");
    }

    /** A number, or null for NaN (JSON has no NaN). */
    static String num(double d) {
        return Double.isFinite(d) ? String.format(Locale.ROOT, "%.6g", d) : "null";
    }

    static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
