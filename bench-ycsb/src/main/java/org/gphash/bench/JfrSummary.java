package org.gphash.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * {@code JfrSummary RECORDING [DEPTH]}: where a flight recording's threads ran and where they waited,
 * read with {@code jdk.jfr.consumer}. The {@code jfr} tool's views and its print of stacks fail on JDK
 * 25 for some frames ("Range [1, -1) out of bounds" formatting a method name), which emptied the
 * device scripts' summaries (docs/lab/2026-11-30-replays-by-batch-kind.md, call 72); this formats
 * frames itself. Prints the top frames of the execution samples, the project's methods by inclusive
 * share, and the waits (parks, monitor entries, sleeps) by site, a site being the event's type and its
 * first DEPTH frames (default 5), ranked by time waited summed over threads.
 */
public final class JfrSummary {

    private static final String PROJECT = "org.gphash.";
    private static final Set<String> WAITS = Set.of("jdk.ThreadPark", "jdk.JavaMonitorEnter", "jdk.JavaMonitorWait",
            "jdk.ThreadSleep");
    private static final String SAMPLE = "jdk.ExecutionSample";

    /** Samples by top frame, by project method (once per sample), and waits by site. */
    record Summary(long samples, Map<String, Long> topFrames, Map<String, Long> projectInclusive, Map<String, Wait> waits) {
    }

    /** One site's waits: how many, and their time summed. */
    record Wait(long count, Duration total) {
        Wait plus(Duration d) {
            return new Wait(count + 1, total.plus(d));
        }
    }

    private JfrSummary() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: JfrSummary RECORDING.jfr [DEPTH]");
            System.exit(2);
        }
        int depth = args.length == 2 ? Integer.parseInt(args[1]) : 5;
        print(summarize(Path.of(args[0]), depth), System.out);
    }

    /** Reads {@code recording} once. */
    static Summary summarize(Path recording, int depth) throws IOException {
        long samples = 0;
        Map<String, Long> top = new HashMap<>();
        Map<String, Long> inclusive = new HashMap<>();
        Map<String, Wait> waits = new HashMap<>();
        try (RecordingFile file = new RecordingFile(recording)) {
            while (file.hasMoreEvents()) {
                RecordedEvent e = file.readEvent();
                String type = e.getEventType().getName();
                RecordedStackTrace stack = e.getStackTrace();
                List<RecordedFrame> frames = stack == null ? List.of() : stack.getFrames();
                if (type.equals(SAMPLE)) {
                    samples++;
                    if (!frames.isEmpty()) {
                        top.merge(method(frames.get(0)), 1L, Long::sum);
                    }
                    Set<String> seen = new HashSet<>();
                    for (RecordedFrame f : frames) {
                        String m = method(f);
                        if (m.startsWith(PROJECT) && seen.add(m)) {
                            inclusive.merge(m, 1L, Long::sum);
                        }
                    }
                } else if (WAITS.contains(type)) {
                    StringBuilder site = new StringBuilder(type.substring("jdk.".length()));
                    for (int i = 0; i < Math.min(depth, frames.size()); i++) {
                        site.append(i == 0 ? " " : " <- ").append(frame(frames.get(i)));
                    }
                    waits.merge(site.toString(), new Wait(1, e.getDuration()), (a, b) -> a.plus(b.total()));
                }
            }
        }
        return new Summary(samples, top, inclusive, waits);
    }

    static void print(Summary s, PrintStream out) {
        out.printf(Locale.ROOT, "== top frames (%d samples)%n", s.samples());
        ranked(s.topFrames(), 25).forEach(en -> out.printf(Locale.ROOT, "%6.2f%% %s%n",
                100.0 * en.getValue() / Math.max(1, s.samples()), en.getKey()));
        out.println("== project methods, inclusive");
        ranked(s.projectInclusive(), 40).forEach(en -> out.printf(Locale.ROOT, "%6.2f%% %s%n",
                100.0 * en.getValue() / Math.max(1, s.samples()), en.getKey()));
        out.println("== waits by site: time summed over threads, count");
        List<Map.Entry<String, Wait>> w = new ArrayList<>(s.waits().entrySet());
        w.sort((a, b) -> b.getValue().total().compareTo(a.getValue().total()));
        w.stream().limit(20).forEach(en -> out.printf(Locale.ROOT, "%10.1f ms %6d  %s%n",
                en.getValue().total().toNanos() / 1e6, en.getValue().count(), en.getKey()));
    }

    private static List<Map.Entry<String, Long>> ranked(Map<String, Long> counts, int n) {
        List<Map.Entry<String, Long>> l = new ArrayList<>(counts.entrySet());
        l.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
        return l.subList(0, Math.min(n, l.size()));
    }

    /** A frame's class and method, the class's package included. */
    private static String method(RecordedFrame f) {
        return f.getMethod().getType().getName() + "." + f.getMethod().getName();
    }

    /** A frame as a site names it: its class's simple name, method and line. */
    private static String frame(RecordedFrame f) {
        String type = f.getMethod().getType().getName();
        return type.substring(type.lastIndexOf('.') + 1) + "." + f.getMethod().getName() + ":" + f.getLineNumber();
    }
}
