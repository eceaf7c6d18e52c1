package org.gphash.cuda;

import java.util.Locale;

/**
 * Where a GPU engine's open (or create) went, stage by stage, in nanoseconds. {@code pool} is the
 * pool's open on the host side, which holds {@code recovery} (the recovery pass, kernels included) and,
 * where the open waited for the GPU, {@code register} (pinning the mapping with CUDA); {@code other} is
 * what the stages leave of {@code total}. Issue 30 asked where a shard's open goes (docs/PERFORMANCE.md,
 * "Open time").
 *
 * <p>An open that served calls on the host while the GPU started ({@link HostFirstEngine}) returned
 * after {@code driver} and {@code pool}: that is its {@code total}; the GPU's stages ran after it,
 * beside the calls, and {@code servedOnHost} says how long after the open's return the GPU engine
 * began to be built over the pool (the calls then waited for {@code cache} and {@code path}).
 *
 * @param stages    the open's stages up to the pool, and how long calls were served on the host
 * @param register  pinning the mapping with CUDA
 * @param recovery  of {@code pool}: the recovery pass
 * @param cache     BktCache's GPU buffers
 * @param path      the batch path: the pipeline's buffers and the HBM index mirror
 * @param mirror    of {@code path}: copying the mirror into GPU memory and building its tags
 * @param total     the whole open, as its caller waited for it
 */
public record OpenTimes(Stages stages, long register, long recovery, long cache, long path, long mirror, long total) {

    /**
     * The open's stages before the GPU engine is built.
     *
     * @param driver       waiting for the GPU's checks before the pool's first write (the driver's start, beside the
     *                     pool's open; 0 where the open waited for the whole runtime instead)
     * @param runtime      waiting for the GPU's CUDA context and kernels, which start on a thread of their own while
     *                     the pool opens (the first engine on a GPU loads them; later ones find them)
     * @param pool         opening the pool, the wait for the runtime left out: the file, its lock, the mapping, the
     *                     regions' checks, registration (where the open waited for the GPU) and recovery
     * @param servedOnHost from the open's return to the GPU engine's build, calls served on the host meanwhile (0:
     *                     the open waited for the GPU)
     * @param check        the GPU's checks on their own thread, whole (0 where the open waited for the runtime instead)
     * @param driverLoad   of {@code check}: loading JCuda's native library (0 where an earlier open did)
     * @param driverInit   of {@code check}: the driver's cuInit (0 where an earlier open did)
     */
    public record Stages(long driver, long runtime, long pool, long servedOnHost, long check, long driverLoad,
                         long driverInit) {
    }

    public long driver() {
        return stages.driver;
    }

    public long runtime() {
        return stages.runtime;
    }

    public long pool() {
        return stages.pool;
    }

    public long servedOnHost() {
        return stages.servedOnHost;
    }

    /** {@return what the named stages leave of the total: the engine's own set-up between them} */
    public long other() {
        return servedOnHost() > 0 ? 0 : total - driver() - runtime() - pool() - cache - path;
    }

    /** One line, in milliseconds. */
    @Override
    public String toString() {
        if (servedOnHost() > 0) {
            return String.format(Locale.ROOT, "open %.0f ms: GPU check waited for %.0f (the check %.0f: JCuda's library %.0f, "
                            + "cuInit %.0f), pool %.0f (recovery %.0f); then served on the host %.0f while the GPU started "
                            + "(CUDA runtime waited for %.0f, registration %.0f); hand-over: cache %.0f, batch path %.0f "
                            + "(mirror load %.0f)",
                    ms(total), ms(driver()), ms(stages.check), ms(stages.driverLoad), ms(stages.driverInit), ms(pool()),
                    ms(recovery), ms(servedOnHost()), ms(runtime()), ms(register), ms(cache), ms(path), ms(mirror));
        }
        return String.format(Locale.ROOT, "open %.0f ms: %sCUDA runtime (waited for) %.0f, pool %.0f (registration %.0f, "
                        + "recovery %.0f, mapping and the rest %.0f), cache %.0f, batch path %.0f (mirror load %.0f), other %.0f",
                ms(total), driver() > 0 ? String.format(Locale.ROOT, "GPU check waited for %.0f, ", ms(driver())) : "", ms(runtime()),
                ms(pool()), ms(register), ms(recovery), ms(pool() - register - recovery), ms(cache), ms(path), ms(mirror),
                ms(other()));
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
