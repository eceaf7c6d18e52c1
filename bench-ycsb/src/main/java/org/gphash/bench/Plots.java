package org.gphash.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * PNG plots with XChart, shaped like the GPHash paper's figures: per workload, throughput against
 * mean batch latency with one point per batch size and one line per system (Figures 5 and 6,
 * when the run swept batch sizes); and per batch size, throughput of every system on every
 * workload side by side (Figure 10's comparison). Runs headless.
 */
final class Plots {

    private Plots() {
    }

    /** Writes the plots under {@code dir}; returns the files written. */
    static List<Path> write(Path dir, List<Measurement> rows, boolean curves) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Files.createDirectories(dir);
        List<Path> written = new ArrayList<>();
        Set<String> systems = new LinkedHashSet<>();
        Set<String> workloads = new LinkedHashSet<>();
        Set<Integer> batches = new LinkedHashSet<>();
        for (Measurement m : rows) {
            systems.add(m.system());
            workloads.add(m.workload());
            batches.add(m.batchSize());
        }
        if (curves) {
            for (String w : workloads) {
                XYChart chart = new XYChartBuilder().width(640).height(440)
                        .title("Throughput vs latency, workload " + w)
                        .xAxisTitle("mean latency per batch (ms)").yAxisTitle("throughput (Mops/s)").build();
                chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);  // inside, it covered the tallest bar or a curve's end
                for (String s : systems) {
                    List<Double> x = new ArrayList<>();
                    List<Double> y = new ArrayList<>();
                    for (Measurement m : rows) {
                        if (m.system().equals(s) && m.workload().equals(w)) {
                            x.add(m.meanBatchNanos() / 1e6);
                            y.add(m.opsPerSecond() / 1e6);
                        }
                    }
                    if (!x.isEmpty()) {
                        chart.addSeries(s, x, y);
                    }
                }
                written.add(save(chart, dir.resolve("curve-" + fileName(w))));
            }
        }
        for (int b : batches) {
            CategoryChart chart = new CategoryChartBuilder().width(Math.max(640, 90 * workloads.size())).height(440)
                    .title("Throughput per workload, batch size " + b)
                    .xAxisTitle("workload").yAxisTitle("throughput (Mops/s)").build();
            chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);  // inside, it covered the tallest bar or a curve's end
            for (String s : systems) {
                List<String> xs = new ArrayList<>();
                List<Double> ys = new ArrayList<>();
                for (String w : workloads) {
                    double v = 0;
                    for (Measurement m : rows) {
                        if (m.system().equals(s) && m.workload().equals(w) && m.batchSize() == b) {
                            v = m.opsPerSecond() / 1e6;
                        }
                    }
                    xs.add(w);
                    ys.add(v);
                }
                chart.addSeries(s, xs, ys);
            }
            written.add(save(chart, dir.resolve("workloads-batch" + b)));
        }
        return written;
    }

    private static Path save(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, Path base) throws IOException {
        BitmapEncoder.saveBitmap(chart, base.toString(), BitmapEncoder.BitmapFormat.PNG);
        return Path.of(base + ".png");
    }

    private static String fileName(String label) {
        return label.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-");
    }
}
