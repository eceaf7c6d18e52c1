package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;

/**
 * GPU time per stage of the v2 pipeline, from events recorded between stages (a diagnostic for
 * benchmarks: it adds a little per stage, and batches run without graphs while it is on). Not
 * thread-safe; meaningful for batches awaited one at a time.
 */
public final class StageProfile implements AutoCloseable {

    /** The stages, as the profile names them. */
    public enum Stage { GROUP, SORT, RESOLVE, SEMANTICS, PLACE, READ, TAKE, WRITE_VALUES, WRITE_KEYS, PUBLISH, CACHE, RETIRE }

    private final CUevent[] marks = new CUevent[Stage.values().length + 1];
    private final long[] stageNanos = new long[Stage.values().length];
    private boolean on;
    private int recorded;

    boolean on() {
        return on;
    }

    /** Turns timing on or off and clears what was timed. */
    void enable(boolean enable) {
        if (enable && marks[0] == null) {
            for (int i = 0; i < marks.length; i++) {
                marks[i] = new CUevent();
                cuEventCreate(marks[i], CUevent_flags.CU_EVENT_DEFAULT);
            }
        }
        on = enable;
        Arrays.fill(stageNanos, 0);
    }

    /** Starts a batch's marks. */
    void begin() {
        recorded = 0;
    }

    /** Records the end of the next stage (or of the setup, first), when on. */
    void mark(CUstream stream) {
        if (on) {
            cuEventRecord(marks[recorded++], stream);
        }
    }

    /** After the batch finished: adds each stage's time. */
    void collect() {
        if (!on) {
            return;
        }
        float[] ms = new float[1];
        for (int s = 1; s < recorded; s++) {
            cuEventElapsedTime(ms, marks[s - 1], marks[s]);
            stageNanos[s - 1] += (long) (ms[0] * 1e6);
        }
    }

    /**
     * Adds a batch's stage times from clock readings taken inside one kernel (the one-launch small
     * writes): {@code stamps[0]} its start, {@code stamps[1 + s]} the end of stage {@code s}.
     */
    void collectStamps(long[] stamps) {
        if (!on) {
            return;
        }
        for (int s = 1; s < stamps.length && s <= stageNanos.length; s++) {
            stageNanos[s - 1] += Math.max(0, stamps[s] - stamps[s - 1]);
        }
    }

    /** GPU time per stage since timing was turned on, in nanoseconds. */
    Map<Stage, Long> nanos() {
        Map<Stage, Long> m = new LinkedHashMap<>();
        for (Stage s : Stage.values()) {
            m.put(s, stageNanos[s.ordinal()]);
        }
        return m;
    }

    @Override
    public void close() {
        for (CUevent e : marks) {
            if (e != null) {
                cuEventDestroy(e);
            }
        }
    }
}
