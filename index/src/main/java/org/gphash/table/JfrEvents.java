package org.gphash.table;

import java.nio.file.Path;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Timespan;


/**
 * The JFR event types of {@link PoolEvents}; loaded only where the runtime has {@code jdk.jfr}, and an
 * event made only once JFR is initialized (a recording started): the first event class loaded pulls in
 * about 114 of JFR's own classes, which every pool open paid in a JVM that records nothing (a fresh
 * JVM's first open loaded 1,111 classes on the CPU backend: docs/lab/2026-11-30-host-first-open.md).
 */
final class JfrEvents {

    private JfrEvents() {
    }

    @Name("org.gphash.PoolOpen")
    @Label("Pool Open")
    @Category("gphash")
    @Description("A pool opened or created, with what recovery found")
    static final class Open extends Event {
        @Label("Path")
        String path;
        @Label("Created")
        boolean created;
        @Label("Items")
        long items;
        @Label("Repaired")
        boolean repaired;
        @Label("From Close Record")
        boolean fromCloseRecord;
        @Label("Recovery Time")
        @Timespan
        long recoveryNanos;
    }

    @Name("org.gphash.Resize")
    @Label("Resize")
    @Category("gphash")
    @Description("A new top level, the bottom level's items moved up")
    static final class Resize extends Event {
        @Label("Path")
        String path;
        @Label("Top Level Log2")
        int topLevelLog2;
        @Label("Items")
        long items;
        @Label("Resize Time")
        @Timespan
        long resizeNanos;
    }

    @Name("org.gphash.HeapGrowth")
    @Label("Heap Growth")
    @Category("gphash")
    @Description("The value heap grew by a chunk")
    static final class HeapGrowth extends Event {
        @Label("Path")
        String path;
        @Label("Bytes")
        @DataAmount
        long bytes;
        @Label("Total Blocks")
        long totalBlocks;
    }

    static void opened(Path path, boolean created, org.gphash.RecoveryReport report) {
        if (!FlightRecorder.isInitialized()) {
            return;  // no recording has ever started: loading the event class would load JFR itself
        }
        Open e = new Open();
        if (e.shouldCommit()) {
            e.path = path.toString();
            e.created = created;
            e.items = report.items();
            e.repaired = report.repairedAnything();
            e.fromCloseRecord = report.fromCloseRecord();
            e.recoveryNanos = report.duration().toNanos();
            e.commit();
        }
    }

    static void resized(Path path, int topLevelLog2, long items, long nanos) {
        if (!FlightRecorder.isInitialized()) {
            return;  // no recording has ever started: loading the event class would load JFR itself
        }
        Resize e = new Resize();
        if (e.shouldCommit()) {
            e.path = path.toString();
            e.topLevelLog2 = topLevelLog2;
            e.items = items;
            e.resizeNanos = nanos;
            e.commit();
        }
    }

    static void heapGrown(Path path, long bytes, long totalBlocks) {
        if (!FlightRecorder.isInitialized()) {
            return;  // no recording has ever started: loading the event class would load JFR itself
        }
        HeapGrowth e = new HeapGrowth();
        if (e.shouldCommit()) {
            e.path = path.toString();
            e.bytes = bytes;
            e.totalBlocks = totalBlocks;
            e.commit();
        }
    }
}
