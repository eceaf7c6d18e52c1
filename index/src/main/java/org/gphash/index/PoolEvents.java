package org.gphash.index;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * JDK Flight Recorder events for what {@link PoolLog} logs: an application recording with JFR sees
 * pool opens, resizes and heap growths beside its own events (category "gphash"). Disabled events
 * cost a branch.
 */
public final class PoolEvents {

    private PoolEvents() {
    }

    /** A pool opened or created, recovery included. */
    @Name("org.gphash.PoolOpen")
    @Label("Pool Open")
    @Category("gphash")
    @Description("A pool opened or created, with what recovery found")
    public static final class Open extends Event {
        /** The pool file. */
        @Label("Path")
        public String path;
        /** Whether the pool was created rather than opened. */
        @Label("Created")
        public boolean created;
        /** Items in the pool after recovery. */
        @Label("Items")
        public long items;
        /** Whether recovery changed the pool. */
        @Label("Repaired")
        public boolean repaired;
        /** Whether open trusted the close record instead of scanning the table. */
        @Label("From Close Record")
        public boolean fromCloseRecord;
    }

    /** A resize: a new top level, the bottom level's items moved up. */
    @Name("org.gphash.Resize")
    @Label("Resize")
    @Category("gphash")
    public static final class Resize extends Event {
        /** The pool file. */
        @Label("Path")
        public String path;
        /** log2 of the new top level's buckets. */
        @Label("Top Level Log2")
        public int topLevelLog2;
        /** Items in the pool. */
        @Label("Items")
        public long items;
    }

    /** The value heap grew by a chunk. */
    @Name("org.gphash.HeapGrowth")
    @Label("Heap Growth")
    @Category("gphash")
    public static final class HeapGrowth extends Event {
        /** The pool file. */
        @Label("Path")
        public String path;
        /** Bytes added. */
        @Label("Bytes")
        @DataAmount
        public long bytes;
        /** Value blocks in the heap after it. */
        @Label("Total Blocks")
        public long totalBlocks;
    }

    /**
     * Records a pool opened or created.
     *
     * @param path    the pool file
     * @param created whether it was created
     * @param report  what recovery found
     */
    static void opened(java.nio.file.Path path, boolean created, org.gphash.RecoveryReport report) {
        Open e = new Open();
        if (e.isEnabled()) {
            e.path = path.toString();
            e.created = created;
            e.items = report.items();
            e.repaired = report.repairedAnything();
            e.fromCloseRecord = report.fromCloseRecord();
            e.commit();
        }
    }
}
