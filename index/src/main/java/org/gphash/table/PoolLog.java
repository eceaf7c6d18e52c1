package org.gphash.table;

import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import java.nio.file.Path;

/**
 * The engine's log: {@link System.Logger} named {@code org.gphash}, so it goes wherever the
 * application sends the JDK's platform logging (java.util.logging by default; SLF4J or Log4j through
 * their {@code System.LoggerFinder} bridges). Repairs are logged at WARNING (an open whose recovery
 * changed the pool); the rest at DEBUG (create, open with what recovery found, resize, heap growth,
 * BktCache loads), so that a library embedded in an application prints nothing unasked: the
 * default java.util.logging configuration shows INFO and above.
 */
public final class PoolLog {

    /** The logger every part of the engine writes to. */
    public static final Logger LOG = System.getLogger("org.gphash");

    private PoolLog() {
    }

    /**
     * Logs a pool opened or created: what recovery found, at WARNING when it repaired anything and
     * DEBUG otherwise.
     *
     * @param what    "created" or "opened"
     * @param path    the pool file
     * @param report  what recovery found and did
     * @param nanos   how long the open took
     */
    public static void opened(String what, Path path, org.gphash.RecoveryReport report, long nanos) {
        Level level = report.repairedAnything() ? Level.WARNING : Level.DEBUG;
        if (LOG.isLoggable(level)) {
            LOG.log(level, "gphash: {0} pool {1} in {2} ms: {3}", what, path, nanos / 1_000_000, report);
        }
    }
}
