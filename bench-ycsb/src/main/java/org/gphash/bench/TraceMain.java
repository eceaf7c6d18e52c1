package org.gphash.bench;

import java.util.Arrays;

import org.gphash.cli.Cli;

/** {@code ./gphash trace dlrm|pagerank [options]}: dispatches to the trace generators. */
public final class TraceMain {

    private TraceMain() {
    }

    public static void main(String[] args) {
        String kind = args.length == 0 ? "" : args[0];
        String[] rest = Arrays.copyOfRange(args, Math.min(1, args.length), args.length);
        int status = 0;
        try {
            switch (kind) {
                case "dlrm" -> DlrmTrace.main(rest, System.out);
                case "pagerank" -> PageRankTrace.main(rest, System.out);
                default -> {
                    System.err.println("usage: ./gphash trace dlrm|pagerank [options]   (--help after the name for the options)");
                    status = 2;
                }
            }
        } catch (Cli.UsageException e) {
            System.err.println("gphash trace " + kind + ": " + e.getMessage());
            status = 2;
        } catch (Exception e) {
            System.err.println("gphash trace " + kind + ": FAILED: " + e.getMessage());
            e.printStackTrace(System.err);
            status = 1;
        }
        System.exit(status);
    }
}
