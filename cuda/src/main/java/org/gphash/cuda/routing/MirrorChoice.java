package org.gphash.cuda.routing;

import java.util.Locale;

import org.gphash.IndexMirror;

/**
 * Whether the GPU engine runs on the HBM index mirror, decided at open from the configuration, the
 * memory the mirror and its batch buffers need, and what the GPU has free. Pure, so it is tested
 * without a GPU.
 *
 * <p>The system property {@code gphash.indexMirror} (AUTO, REQUIRED, OFF) overrides a configuration
 * that left the choice to the engine ({@link IndexMirror#AUTO}): an operator's switch, and how the GPU
 * tests run the whole suite on both paths.
 */
public record MirrorChoice(boolean mirror, String reason) {

    public static final String PROPERTY = "gphash.indexMirror";

    /** The mode in force: the configuration's, or the system property's where the configuration says AUTO. */
    public static IndexMirror effective(IndexMirror configured) {
        String p = System.getProperty(PROPERTY);
        if (configured != IndexMirror.AUTO || p == null || p.isBlank()) {
            return configured;
        }
        try {
            return IndexMirror.valueOf(p.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("system property " + PROPERTY + "=" + p + " is none of AUTO, REQUIRED, OFF", e);
        }
    }

    /**
     * The decision for mode {@code mode}, a need of {@code needBytes} and {@code freeBytes} free, keeping
     * {@code marginBytes} free for the cache and others. REQUIRED without the memory is an error.
     */
    public static MirrorChoice decide(IndexMirror mode, long needBytes, long freeBytes, long marginBytes) {
        if (mode == IndexMirror.OFF) {
            return new MirrorChoice(false, "index mirror off: IndexMirror.OFF");
        }
        if (freeBytes - marginBytes >= needBytes) {
            return new MirrorChoice(true, "HBM mirror");
        }
        String why = "the mirror and its batch buffers need " + (needBytes >> 20) + " MiB (plus " + (marginBytes >> 20)
                + " MiB kept free), the GPU has " + (freeBytes >> 20) + " MiB free";
        if (mode == IndexMirror.REQUIRED) {
            throw new IllegalStateException("IndexMirror.REQUIRED, but " + why);
        }
        return new MirrorChoice(false, "index mirror off: " + why);
    }
}
