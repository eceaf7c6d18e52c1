package org.gphash.cuda;

import java.util.Locale;

/**
 * Where a GPU engine's open (or create) went, stage by stage, in nanoseconds. {@code pool} is the
 * pool's open on the host side, which holds {@code register} (pinning the mapping with CUDA) and
 * {@code recovery} (the recovery pass, kernels included); {@code other} is what the stages leave of
 * {@code total}. Issue 30 asked where a shard's open goes (docs/PERFORMANCE.md, "Open time").
 *
 * @param runtime   waiting for the GPU's CUDA context and kernels, which start on a thread of their own while
 *                  the pool opens (the first engine on a GPU loads them; later ones find them)
 * @param pool      opening the pool, the wait for the runtime left out: the file, its lock, the mapping,
 *                  the regions' checks, registration and recovery
 * @param register  of {@code pool}: registering the mapping with CUDA
 * @param recovery  of {@code pool}: the recovery pass
 * @param cache     BktCache's GPU buffers
 * @param path      the batch path: the pipeline's buffers and the HBM index mirror
 * @param mirror    of {@code path}: copying the mirror into GPU memory and building its tags
 * @param total     the whole open, as its caller waited for it
 */
public record OpenTimes(long runtime, long pool, long register, long recovery, long cache, long path, long mirror,
                        long total) {

    /** {@return what the named stages leave of the total: the engine's own set-up between them} */
    public long other() {
        return total - runtime - pool - cache - path;
    }

    /** One line, in milliseconds. */
    @Override
    public String toString() {
        return String.format(Locale.ROOT, "open %.0f ms: CUDA runtime (waited for) %.0f, pool %.0f (registration %.0f, recovery %.0f, "
                        + "mapping and the rest %.0f), cache %.0f, batch path %.0f (mirror load %.0f), other %.0f",
                ms(total), ms(runtime), ms(pool), ms(register), ms(recovery), ms(pool - register - recovery), ms(cache), ms(path),
                ms(mirror), ms(other()));
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
