package org.gphash.bench.gpu;

import java.util.Locale;
import java.util.Map;

import org.gphash.cuda.GpuEngine;

/** How the GPU benchmarks print where a run's time went: the GPU's timeline, the host's stages, the pipeline's stages. */
final class StageShares {

    private StageShares() {
    }

    /**
     * The GPU's timeline of the chunks ({@code GpuDiagnostics.timeChunks}): its span, and the kernels,
     * copies and the kernels' idle time as shares of it.
     */
    static String gpuShares(Map<String, Long> nanos) {
        long span = nanos.getOrDefault("gpu_span", 0L);
        if (span == 0) {
            return "GPU timeline: none";
        }
        return String.format(Locale.ROOT, "GPU timeline of %d chunks over %.2f ms: kernels %.0f%%, kernels idle %.0f%%, "
                + "copy in %.0f%%, copy out %.0f%%", nanos.get("gpu_chunks"), span / 1e6,
                100.0 * nanos.get("gpu_kernels") / span, 100.0 * nanos.get("gpu_kernel_idle") / span,
                100.0 * nanos.get("gpu_copy_in") / span, 100.0 * nanos.get("gpu_copy_out") / span);
    }

    /** The host's stages as shares of their total. */
    static String hostShares(Map<String, Long> nanos) {
        long total = nanos.getOrDefault("total", 0L);
        StringBuilder sb = new StringBuilder("host time: ");
        for (Map.Entry<String, Long> e : nanos.entrySet()) {
            if (!e.getKey().equals("total") && !e.getKey().startsWith("gpu_") && total > 0 && e.getValue() > 0) {
                sb.append(String.format(Locale.ROOT, "%s %.0f%% ", e.getKey(), 100.0 * e.getValue() / total));
            }
        }
        return sb.append(String.format(Locale.ROOT, "of %.2f ms", total / 1e6)).toString();
    }

    /** The engine's stage shares and GPU time per 2^20 operations since its profiling was turned on. */
    static String stages(GpuEngine gpu, long ops) {
        StringBuilder sb = new StringBuilder();
        long total = 0;
        for (long v : gpu.diagnostics().stageNanos().values()) {
            total += v;
        }
        for (Map.Entry<String, Long> e : gpu.diagnostics().stageNanos().entrySet()) {
            if (e.getValue() > 0 && total > 0) {
                sb.append(String.format(Locale.ROOT, "%s %.0f%% ", e.getKey(), 100.0 * e.getValue() / total));
            }
        }
        return sb.append(String.format(Locale.ROOT, "(%.2f ms per 2^20)", total / 1e6 / Math.max(1.0, ops / (double) (1 << 20))))
                .toString().trim();
    }
}
