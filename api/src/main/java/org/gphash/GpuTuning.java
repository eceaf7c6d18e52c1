package org.gphash;

import java.util.Locale;

/**
 * The GPU engine's tuning, all of it in one place: the sizes at which its router
 * ({@code org.gphash.cuda.routing.Router}) sends a batch one way or another, and the two diagnostics. Set
 * with {@link GPHashIndex.Builder#gpuTuning}; the CPU engine ignores it. The defaults are what the
 * measurements in docs/PERFORMANCE.md chose ("What the options cost"); a value of 0 turns a shortcut off,
 * which is how the measurements behind it compare it with the general route.
 *
 * <p>Without {@link GPHashIndex.Builder#gpuTuning}, a builder starts from {@link #fromSystemProperty()}:
 * the defaults, changed by the one system property {@value #PROPERTY}, a comma-separated list of
 * {@code name=value} (for example {@code -Dgphash.gpuTuning=smallReadsMax=0,oneBinMax=0}), so that a
 * benchmark can compare settings without code. No other system property tunes the engine
 * ({@code gphash.indexMirror} overrides {@link IndexMirror#AUTO}, a placement, not a tuning).
 *
 * @param smallReadsMax     batches of at most this many gets run as one launch each, outside the
 *                          engine's lock, alongside other threads' (a device-resident batch of gets:
 *                          one launch on its own columns); 0: never; 1 to 65,536; default 4096, where
 *                          one launch still beat the pipeline in latency and GPU time
 * @param smallReadSlots    such batches in flight at once (1 to 1024): each slot has its own buffers,
 *                          stream and events
 * @param smallWritesMax    writing batches (and the pipeline's writing runs: a device-resident batch's
 *                          slices) of at most this many operations run as one cooperative launch,
 *                          grouped by key on the GPU where keys repeat (0: never; at most 4096,
 *                          {@link #SMALL_WRITES_LIMIT}); default 4096, which beat a limit of 128
 *                          for distinct keys only at every batch size measured, and under YCSB's
 *                          client, whose coalesced batches repeat keys
 * @param distinctWritesMax writing batches (or chunks) of at most this many operations are checked for
 *                          distinct keys on the host, and when distinct skip the pipeline's grouping
 *                          (0: never; default 32, measured best: larger checks cost more than they saved)
 * @param oneBinMax         batches of at most this many operations put every pool access in one address
 *                          bin, skipping the bins' memsets and scans (0: always bin)
 * @param growHeapAhead     whether a batch that leaves less than an eighth of the value heap free starts
 *                          preparing the next growth on a thread of its own (measured on the DLRM
 *                          replay: docs/PERFORMANCE.md)
 * @param logBatches        a diagnostic: every pipeline run's counters go to standard error, and its
 *                          bin lists are checked
 * @param hostBatchesMax    batches of at most this many operations may run on the host, with the CPU
 *                          engine's code on the mapped pool between the GPU's work, where the router's
 *                          costs measured on this machine say the host is no slower (larger ones always
 *                          run on the GPU); single writes run on the host unless this is 0, which keeps
 *                          every write on the GPU (how the measurements compare the two); 0 to 2^20,
 *                          default 65,536
 */
public record GpuTuning(int smallReadsMax, int smallReadSlots, int smallWritesMax, int distinctWritesMax, int oneBinMax,
                        boolean growHeapAhead, boolean logBatches, int hostBatchesMax) {

    /** The system property a builder's default tuning reads ({@link #fromSystemProperty()}). */
    public static final String PROPERTY = "gphash.gpuTuning";

    /**
     * The most operations {@code smallWritesMax} may let a one-launch writing batch hold (kSmallWritesMax):
     * the one-block sort that groups its keys sorts at most 4096, the pipeline buffers' smallest class.
     */
    public static final int SMALL_WRITES_LIMIT = 4096;

    /** The defaults, as measured (see each component). */
    public static final GpuTuning DEFAULTS = new GpuTuning(4096, 32, 4096, 32, 1024, true, false, 1 << 16);

    /** Checks the fields: each names what is wrong in its exception. */
    public GpuTuning {
        check("smallReadsMax", smallReadsMax, 0, 1 << 16);
        check("smallReadSlots", smallReadSlots, 1, 1024);
        check("smallWritesMax", smallWritesMax, 0, SMALL_WRITES_LIMIT);
        check("distinctWritesMax", distinctWritesMax, 0, 1 << 16);
        check("oneBinMax", oneBinMax, 0, 1 << 20);
        check("hostBatchesMax", hostBatchesMax, 0, 1 << 20);
    }

    private static void check(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException("GpuTuning." + name + " must be " + min + " to " + max + ", got " + value);
        }
    }

    /**
     * The defaults, changed by the system property {@value #PROPERTY} where it is set.
     *
     * @return the tuning a builder starts from
     * @throws IllegalArgumentException naming the property, when it does not parse
     */
    public static GpuTuning fromSystemProperty() {
        String spec = System.getProperty(PROPERTY);
        try {
            return DEFAULTS.with(spec);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("system property " + PROPERTY + "=" + spec + ": " + e.getMessage(), e);
        }
    }

    /**
     * This tuning, changed by a comma-separated list of {@code name=value} (component names;
     * booleans as {@code true} or {@code false}); null or blank changes nothing.
     *
     * @param spec the changes
     * @return a copy with them
     * @throws IllegalArgumentException naming an unknown component or a value that does not parse
     */
    public GpuTuning with(String spec) {
        if (spec == null || spec.isBlank()) {
            return this;
        }
        int reads = smallReadsMax;
        int slots = smallReadSlots;
        int writes = smallWritesMax;
        int distinct = distinctWritesMax;
        int oneBin = oneBinMax;
        boolean ahead = growHeapAhead;
        boolean log = logBatches;
        int host = hostBatchesMax;
        for (String part : spec.split(",")) {
            String p = part.trim();
            int eq = p.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("'" + p + "' is not name=value");
            }
            String name = p.substring(0, eq).trim();
            String value = p.substring(eq + 1).trim();
            switch (name) {
                case "smallReadsMax" -> reads = integer(name, value);
                case "smallReadSlots" -> slots = integer(name, value);
                case "smallWritesMax" -> writes = integer(name, value);
                case "distinctWritesMax" -> distinct = integer(name, value);
                case "oneBinMax" -> oneBin = integer(name, value);
                case "growHeapAhead" -> ahead = bool(name, value);
                case "logBatches" -> log = bool(name, value);
                case "hostBatchesMax" -> host = integer(name, value);
                default -> throw new IllegalArgumentException("no tuning named '" + name + "' (smallReadsMax, smallReadSlots, "
                        + "smallWritesMax, distinctWritesMax, oneBinMax, growHeapAhead, logBatches, hostBatchesMax)");
            }
        }
        return new GpuTuning(reads, slots, writes, distinct, oneBin, ahead, log, host);
    }

    private static int integer(String name, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + "=" + value + " is not a whole number", e);
        }
    }

    private static boolean bool(String name, String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(name + "=" + value + " is neither true nor false");
        };
    }
}
