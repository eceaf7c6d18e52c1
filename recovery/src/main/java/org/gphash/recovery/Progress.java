package org.gphash.recovery;

import java.io.PrintStream;

/**
 * A progress bar for long scans, drawn on a terminal with carriage returns and redrawn at most
 * every 1% (so a scan of billions of slots does not spend its time printing). Silent when
 * standard error is not a terminal, so logs and tests see no control characters.
 */
public class Progress {

    /** Draws nothing. */
    public static final Progress NONE = new Progress(null);

    private static final int WIDTH = 40;

    private final PrintStream out;
    private String label;
    private long total;
    private long done;
    private long nextDraw;

    Progress(PrintStream out) {
        this.out = out;
    }

    /** {@return a bar on standard error if it is a terminal, else {@link #NONE}} */
    public static Progress forTerminal() {
        java.io.Console c = System.console();
        return c != null && c.isTerminal() ? new Progress(System.err) : NONE;
    }

    void start(String what, long units) {
        this.label = what;
        this.total = Math.max(1, units);
        this.done = 0;
        this.nextDraw = 0;
    }

    void advance(long units) {
        done += units;
        if (out != null && done >= nextDraw) {
            nextDraw = done + total / 100 + 1;
            draw();
        }
    }

    void finish() {
        if (out != null) {
            done = total;
            draw();
            out.println();
        }
    }

    private void draw() {
        int filled = (int) (WIDTH * Math.min(done, total) / total);
        out.print("\r" + label + " [" + "#".repeat(filled) + " ".repeat(WIDTH - filled) + "] "
                + (100 * Math.min(done, total) / total) + "%");
        out.flush();
    }
}
