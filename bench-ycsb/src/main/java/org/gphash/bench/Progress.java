package org.gphash.bench;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A progress bar on stderr for long runs: redrawn in place twice a second on a terminal, a line
 * every 10 seconds otherwise (logs stay readable). Workers only add to a counter, so the bar costs
 * the measured code one atomic add per batch.
 */
final class Progress implements AutoCloseable {

    private static final int WIDTH = 30;

    private final PrintStream err;
    private final boolean enabled;
    private final boolean terminal;
    private final AtomicLong done = new AtomicLong();
    private volatile long total;
    private volatile String label = "";
    private final Thread ticker;
    private volatile boolean closed;

    Progress(PrintStream err, boolean enabled) {
        this.err = err;
        this.enabled = enabled;
        this.terminal = System.console() != null;
        this.ticker = new Thread(this::tick, "gphash-bench-progress");
        this.ticker.setDaemon(true);
        if (enabled) {
            ticker.start();
        }
    }

    /** Starts a new phase of {@code total} operations. */
    void phase(String label, long total) {
        this.label = label;
        this.total = total;
        done.set(0);
    }

    void add(long n) {
        done.addAndGet(n);
    }

    private void tick() {
        long lastLine = System.nanoTime();
        while (!closed) {
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                return;
            }
            long t = total;
            if (t <= 0) {
                continue;
            }
            double f = Math.min(1.0, (double) done.get() / t);
            if (terminal) {
                int filled = (int) Math.round(f * WIDTH);
                err.print("\r[" + "#".repeat(filled) + " ".repeat(WIDTH - filled) + "] "
                        + String.format(java.util.Locale.ROOT, "%3.0f%% ", f * 100) + label + "      ");
                err.flush();
            } else if (System.nanoTime() - lastLine > 10_000_000_000L) {
                lastLine = System.nanoTime();
                err.println(String.format(java.util.Locale.ROOT, "  ... %3.0f%% %s", f * 100, label));
            }
        }
    }

    /** Clears the bar (before the table is printed). */
    void clearLine() {
        if (enabled && terminal) {
            err.print("\r" + " ".repeat(WIDTH + 60) + "\r");
            err.flush();
        }
    }

    @Override
    public void close() {
        closed = true;
        ticker.interrupt();
        clearLine();
    }
}
