package org.gphash.bench;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.gphash.cli.Report;

/**
 * The per-run table: one row per system and workload with throughput, mean and p99 latency per
 * batch, load factor and cache hit rate ("-" where a system has none), and the count of wrong
 * results; then the engine's throughput relative to each baseline, workload by workload.
 */
final class ResultTable {

    private ResultTable() {
    }

    static void print(PrintStream out, String title, List<Measurement> rows) {
        out.println();
        out.println("== " + title);
        out.println(String.format(Locale.ROOT, "%-13s %-10s %12s %12s %11s %11s %7s %6s %6s",
                "system", "workload", "ops", "Mops/s", "mean/batch", "p99/batch", "load", "hit", "wrong"));
        for (Measurement m : rows) {
            out.println(String.format(Locale.ROOT, "%-13s %-10s %12s %12.3f %11s %11s %7s %6s %6d",
                    m.system(), m.workload(), Report.count(m.operations()), m.opsPerSecond() / 1e6,
                    Report.millis(m.meanBatchNanos()), Report.millis(m.p99BatchNanos()),
                    orDash(m.loadFactor()), orDash(m.cacheHitRate()), m.unexpected()));
        }
    }

    /** "engine / baseline" throughput per workload and batch size (the numbers the docs quote). */
    static void printRatios(PrintStream out, List<Measurement> all, String engine) {
        Map<String, Measurement> byKey = new LinkedHashMap<>();
        for (Measurement m : all) {
            byKey.put(m.system() + "|" + m.workload() + "|" + m.batchSize(), m);
        }
        StringBuilder sb = new StringBuilder();
        for (Measurement m : all) {
            if (m.system().equals(engine)) {
                continue;
            }
            Measurement e = byKey.get(engine + "|" + m.workload() + "|" + m.batchSize());
            if (e == null || m.opsPerSecond() == 0) {
                continue;
            }
            sb.append(String.format(Locale.ROOT, "  %-10s %-12s %s / %s = %.2fx%n", m.workload(),
                    m.batchSize() > 0 ? "batch " + m.batchSize() : "", engine, m.system(),
                    e.opsPerSecond() / m.opsPerSecond()));
        }
        if (!sb.isEmpty()) {
            out.println();
            out.println("throughput ratios:");
            out.print(sb);
        }
    }

    private static String orDash(double d) {
        return Double.isNaN(d) ? "-" : String.format(Locale.ROOT, "%.3f", d);
    }
}
