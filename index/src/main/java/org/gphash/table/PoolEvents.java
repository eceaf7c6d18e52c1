package org.gphash.table;

import java.nio.file.Path;


/**
 * JDK Flight Recorder events for what {@link PoolLog} logs: an application recording with JFR sees
 * pool opens, resizes and heap growths beside its own events (category "gphash"; the event types
 * are in {@link JfrEvents}). A runtime without the {@code jdk.jfr} module (a jlinked image that left
 * it out) gets none, and nothing here touches the module then: the event classes are loaded only
 * behind {@link #AVAILABLE}.
 */
public final class PoolEvents {

    /** Whether this runtime has JFR. */
    static final boolean AVAILABLE = ModuleLayer.boot().findModule("jdk.jfr").isPresent();

    private PoolEvents() {
    }

    /**
     * Records a pool opened or created.
     *
     * @param path    the pool file
     * @param created whether it was created
     * @param report  what recovery found
     */
    static void opened(Path path, boolean created, org.gphash.RecoveryReport report) {
        if (AVAILABLE) {
            JfrEvents.opened(path, created, report);
        }
    }

    /**
     * Records a resize that took {@code nanos}.
     *
     * @param path         the pool file
     * @param topLevelLog2 log2 of the new top level's buckets
     * @param items        items in the pool
     * @param nanos        how long it took
     */
    static void resized(Path path, int topLevelLog2, long items, long nanos) {
        if (AVAILABLE) {
            JfrEvents.resized(path, topLevelLog2, items, nanos);
        }
    }

    /**
     * Records a heap growth.
     *
     * @param path        the pool file
     * @param bytes       bytes added
     * @param totalBlocks value blocks in the heap after it
     */
    static void heapGrown(Path path, long bytes, long totalBlocks) {
        if (AVAILABLE) {
            JfrEvents.heapGrown(path, bytes, totalBlocks);
        }
    }
}
