package org.gphash.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Draws the plots of a run from its {@code --json} file: the GPU machine's bundled runtime has no
 * AWT, so a run there writes JSON and the PNGs are drawn here.
 *
 * <pre>./gphash run org.gphash.bench.PlotJson RUN.json OUT_DIR</pre>
 *
 * Reads the measurement lines exactly as {@link JsonReport} writes them (one object per line).
 */
public final class PlotJson {

    /** One measurement object as {@link JsonReport} writes it (white space after ':' and ',' optional). */
    private static final Pattern ROW = Pattern.compile(("\\{\"system\": \"([^\"]+)\", \"workload\": \"([^\"]+)\", "
            + "\"batchSize\": (\\d+), \"threads\": (\\d+), \"operations\": (\\d+), \"nanos\": (\\d+), "
            + "\"opsPerSecond\": [^,]+, \"meanBatchNanos\": ([^,]+), \"p99BatchNanos\": (\\d+), "
            + "\"loadFactor\": ([^,]+), \"cacheHitRate\": ([^,]+), \"unexpected\": (\\d+)\\}")
            .replace(": ", ":\\s*").replace(", ", ",\\s*"));

    private PlotJson() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ./gphash run org.gphash.bench.PlotJson RUN.json OUT_DIR");
            System.exit(2);
        }
        List<Measurement> rows = parse(Files.readString(Path.of(args[0])));
        if (rows.isEmpty()) {
            System.err.println("PlotJson: no measurements in " + args[0]);
            System.exit(1);
        }
        boolean curves = rows.stream().map(Measurement::batchSize).distinct().count() > 1;
        for (Path p : Plots.write(Path.of(args[1]), rows, curves)) {
            System.out.println("PlotJson: wrote " + p);
        }
    }

    static List<Measurement> parse(String json) {
        List<Measurement> rows = new ArrayList<>();
        Matcher m = ROW.matcher(json);
        while (m.find()) {
            rows.add(new Measurement(m.group(1), m.group(2), Integer.parseInt(m.group(3)), Integer.parseInt(m.group(4)),
                    Long.parseLong(m.group(5)), Long.parseLong(m.group(6)), number(m.group(7)),
                    Long.parseLong(m.group(8)), number(m.group(9)), number(m.group(10)), Long.parseLong(m.group(11))));
        }
        return rows;
    }

    /** A number as the JSON writer writes it (null for NaN). */
    private static double number(String s) {
        return s.equals("null") ? Double.NaN : Double.parseDouble(s);
    }
}
