package org.gphash.cuda.staging;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;

import java.util.LinkedHashMap;
import java.util.Map;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;

/**
 * The GPU's side of host batches, chunk by chunk, from timing events each lane records around its
 * copy in, its kernels and its copy out (a diagnostic for benchmarks, off unless turned on: twelve
 * driver calls a chunk). What it sums: how long the copies in, the kernels and the copies out took,
 * how long the kernels' stream stood idle between one chunk's kernels and the next one's, and the
 * span from the first copy in to the last copy out. With the host's stages ({@link HostStageTimes})
 * it says where a host batch's time goes: for one Java thread's host batches of gets, mostly copying
 * results out, with the kernels idle where a synchronous caller's first chunk's kernels and last
 * chunk's copy overlap nothing (docs/PERFORMANCE.md, docs/lab/2026-11-27-host-batch-timeline.md).
 * Every time is read against one reference event recorded when timing is turned on. Not
 * thread-safe: the engine's lock guards it.
 */
public final class ChunkTimeline implements AutoCloseable {

    /** The marks a lane records per chunk, in this order of their indexes. */
    static final int COPY_IN_BEGIN = 0;
    static final int COPY_IN_END = 1;
    static final int KERNELS_BEGIN = 2;
    static final int KERNELS_END = 3;
    static final int COPY_OUT_BEGIN = 4;
    static final int COPY_OUT_END = 5;
    static final int MARKS = 6;

    private CUevent reference;
    private boolean on;
    private double copyIn;
    private double kernels;
    private double copyOut;
    private double kernelIdle;
    private double first = Double.NaN;
    private double last;
    private double lastKernelsEnd = Double.NaN;
    private long chunks;

    /** Whether lanes record their marks now. */
    public boolean on() {
        return on;
    }

    /** Turns timing on (clearing what was summed and recording a new reference on {@code stream}) or off. */
    public void enable(boolean enable, CUstream stream) {
        if (enable) {
            if (reference == null) {
                reference = new CUevent();
                cuEventCreate(reference, CUevent_flags.CU_EVENT_DEFAULT);
            }
            cuEventRecord(reference, stream);
        }
        on = enable;
        reset();
    }

    /** Clears what was summed (the reference stays). */
    public void reset() {
        copyIn = 0;
        kernels = 0;
        copyOut = 0;
        kernelIdle = 0;
        first = Double.NaN;
        last = 0;
        lastKernelsEnd = Double.NaN;
        chunks = 0;
    }

    /** Creates a lane's marks: timing events, one per mark. */
    static CUevent[] newMarks() {
        CUevent[] marks = new CUevent[MARKS];
        for (int i = 0; i < MARKS; i++) {
            marks[i] = new CUevent();
            cuEventCreate(marks[i], CUevent_flags.CU_EVENT_DEFAULT);
        }
        return marks;
    }

    /**
     * Adds a chunk whose marks are all recorded and done (its copy out has been waited for). Chunks
     * come oldest first, so the kernels' idle time is the gap since the chunk before's kernels.
     */
    void add(CUevent[] marks) {
        double copyInBegin = at(marks[COPY_IN_BEGIN]);
        double kernelsBegin = at(marks[KERNELS_BEGIN]);
        double kernelsEnd = at(marks[KERNELS_END]);
        double copyOutEnd = at(marks[COPY_OUT_END]);
        copyIn += at(marks[COPY_IN_END]) - copyInBegin;
        kernels += kernelsEnd - kernelsBegin;
        copyOut += copyOutEnd - at(marks[COPY_OUT_BEGIN]);
        if (!Double.isNaN(lastKernelsEnd)) {
            kernelIdle += Math.max(0, kernelsBegin - lastKernelsEnd);
        }
        lastKernelsEnd = kernelsEnd;
        if (Double.isNaN(first)) {
            first = copyInBegin;
        }
        last = Math.max(last, copyOutEnd);
        chunks++;
    }

    /** Milliseconds from the reference to {@code mark}. */
    private double at(CUevent mark) {
        cuEventElapsedTime(elapsed, reference, mark);
        return elapsed[0];
    }

    /** {@link #at}'s out parameter, reused. */
    private final float[] elapsed = new float[1];

    /**
     * Nanoseconds summed since timing was turned on or reset: {@code gpu_copy_in}, {@code gpu_kernels},
     * {@code gpu_copy_out}, {@code gpu_kernel_idle}, {@code gpu_span}; and {@code gpu_chunks}, a count.
     */
    public Map<String, Long> snapshot() {
        Map<String, Long> out = new LinkedHashMap<>();
        out.put("gpu_copy_in", nanos(copyIn));
        out.put("gpu_kernels", nanos(kernels));
        out.put("gpu_copy_out", nanos(copyOut));
        out.put("gpu_kernel_idle", nanos(kernelIdle));
        out.put("gpu_span", Double.isNaN(first) ? 0 : nanos(last - first));
        out.put("gpu_chunks", chunks);
        return out;
    }

    private static long nanos(double ms) {
        return Math.round(ms * 1e6);
    }

    /** Destroys a lane's marks (null: it never recorded any). */
    static void destroy(CUevent[] marks) {
        if (marks != null) {
            for (CUevent e : marks) {
                cuEventDestroy(e);
            }
        }
    }

    @Override
    public void close() {
        if (reference != null) {
            cuEventDestroy(reference);
            reference = null;
        }
    }
}
