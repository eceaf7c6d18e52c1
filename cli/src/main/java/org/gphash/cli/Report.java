package org.gphash.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Number formatting for the demo's report: one place decides units and precision, so that every
 * line of the report reads the same way (grouped counts, MiB, Mops/s or kops/s, ms).
 */
public final class Report {

    private Report() {
    }

    /** 1234567 as "1,234,567". */
    public static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** "1 key", "2,000 keys": a count with its noun, plural unless the count is 1. */
    public static String count(long n, String noun) {
        return count(n) + " " + (n == 1 ? noun : noun + "s");
    }

    /** Bytes in binary units: "512 B", "64.0 KiB", "210.4 MiB", "1.50 GiB". */
    public static String bytes(long b) {
        if (b < 1024) {
            return b + " B";
        }
        if (b < 1024L * 1024) {
            return String.format(Locale.ROOT, "%.1f KiB", b / 1024.0);
        }
        if (b < 1024L * 1024 * 1024) {
            return String.format(Locale.ROOT, "%.1f MiB", b / (1024.0 * 1024));
        }
        return String.format(Locale.ROOT, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    }

    /** Throughput: Mops/s from one million per second up, kops/s below. */
    public static String rate(long ops, long nanos) {
        if (nanos <= 0 || ops == 0) {
            return "-";
        }
        double perSecond = ops * 1e9 / nanos;
        if (perSecond >= 1e6) {
            return String.format(Locale.ROOT, "%.2f Mops/s", perSecond / 1e6);
        }
        if (perSecond >= 1e3) {
            return String.format(Locale.ROOT, "%.0f kops/s", perSecond / 1e3);
        }
        return String.format(Locale.ROOT, "%.0f ops/s", perSecond);
    }

    public static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
    }

    /** Milliseconds with two decimals below 10 ms, one above. */
    public static String millis(double nanos) {
        double ms = nanos / 1e6;
        return String.format(Locale.ROOT, ms < 10 ? "%.2f ms" : "%.1f ms", ms);
    }

    public static String percent(double fraction) {
        double p = fraction * 100;
        return p == Math.rint(p) ? String.format(Locale.ROOT, "%.0f%%", p) : String.format(Locale.ROOT, "%.1f%%", p);
    }

    /**
     * Splits {@code text} at ", " into lines of at most {@code width} characters, each after the
     * first indented by {@code indent}: long one-line records (the recovery report) stay readable.
     */
    public static List<String> wrap(String text, int width, String indent) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String part : text.split(", ")) {
            String piece = line.isEmpty() ? part : ", " + part;
            if (!line.isEmpty() && line.length() + piece.length() + 1 > width) {
                lines.add(line.append(',').toString());
                line = new StringBuilder(indent).append(part);
            } else {
                line.append(piece);
            }
        }
        if (!line.isEmpty()) {
            lines.add(line.toString());
        }
        return lines;
    }
}
