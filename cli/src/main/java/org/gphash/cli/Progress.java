package org.gphash.cli;

import java.io.Console;
import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The project's one progress bar, for long scans, imports and benchmark runs. Workers only add to a
 * counter (one atomic add), and a daemon thread draws: in place twice a second on a terminal, or,
 * where asked, a line every 10 seconds when standard error is not one (logs stay readable). Silent
 * otherwise, so tests and piped output see no control characters.
 */
public class Progress implements AutoCloseable {

    /** Draws nothing. */
    public static final Progress NONE = new Progress(null, false, false);

    private static final int WIDTH = 30;

    private final PrintStream out;
    private final boolean terminal;
    private final boolean lines;
    private final AtomicLong done = new AtomicLong();
    private volatile long total;
    private volatile String label = "";
    private volatile Thread ticker;
    private volatile boolean closed;

    private Progress(PrintStream out, boolean terminal, boolean lines) {
        this.out = out;
        this.terminal = terminal;
        this.lines = lines;
    }

    /** {@return a bar on standard error if it is a terminal, else {@link #NONE}} */
    public static Progress forTerminal() {
        return isTerminal() ? new Progress(System.err, true, false) : NONE;
    }

    /**
     * A bar on {@code err} when {@code enabled}: in place on a terminal, a line every 10 seconds
     * otherwise; {@link #NONE} when not enabled.
     *
     * @param err     where it draws
     * @param enabled whether to draw at all
     * @return the bar
     */
    public static Progress on(PrintStream err, boolean enabled) {
        return enabled ? new Progress(err, isTerminal(), true) : NONE;
    }

    private static boolean isTerminal() {
        Console c = System.console();
        return c != null && c.isTerminal();
    }

    /**
     * Starts a new phase of {@code units}.
     *
     * @param what  what is being done
     * @param units how much there is to do
     */
    public synchronized void start(String what, long units) {
        this.label = what;
        this.total = Math.max(1, units);
        done.set(0);
        if (out != null && ticker == null && !closed) {
            ticker = new Thread(this::tick, "gphash-progress");
            ticker.setDaemon(true);
            ticker.start();
        }
    }

    /**
     * Counts {@code units} more done (any thread).
     *
     * @param units how many
     */
    public void advance(long units) {
        done.addAndGet(units);
    }

    /** Stops drawing, draws the phase as complete and ends its line (a later {@link #start} draws again). */
    public synchronized void finish() {
        stopTicker();
        if (out != null && terminal) {
            done.set(total);
            draw(1.0);
            out.println();
        }
    }

    private synchronized void stopTicker() {
        Thread t = ticker;
        ticker = null;
        if (t != null) {
            t.interrupt();
        }
    }

    private void tick() {
        long lastLine = System.nanoTime();
        while (!closed && Thread.currentThread() == ticker) {
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                return;
            }
            double f = Math.min(1.0, (double) done.get() / total);
            if (terminal) {
                drawIfTicking(f);
            } else if (lines && System.nanoTime() - lastLine > 10_000_000_000L) {
                lastLine = System.nanoTime();
                out.println(String.format(Locale.ROOT, "  ... %3.0f%% %s", f * 100, label));
            }
        }
    }

    /** Draws unless {@link #finish} or {@link #close} stopped this ticker meanwhile (no bar after the line ends). */
    private synchronized void drawIfTicking(double f) {
        if (Thread.currentThread() == ticker) {
            draw(f);
        }
    }

    private synchronized void draw(double f) {
        int filled = (int) Math.round(f * WIDTH);
        out.print("\r[" + "#".repeat(filled) + " ".repeat(WIDTH - filled) + "] "
                + String.format(Locale.ROOT, "%3.0f%% ", f * 100) + label + "      ");
        out.flush();
    }

    /** Clears the bar's line (before a table is printed). */
    public void clearLine() {
        if (out != null && terminal) {
            out.print("\r" + " ".repeat(WIDTH + 60) + "\r");
            out.flush();
        }
    }

    /** Stops drawing and clears the line. */
    @Override
    public void close() {
        closed = true;
        stopTicker();
        clearLine();
    }
}
