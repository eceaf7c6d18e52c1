package org.gphash.cuda.runtime;

import org.gphash.BackendUnavailableException;

/** Why the GPU engine cannot run here, as the exception every entry point throws. */
public final class GpuUnavailable {

    private GpuUnavailable() {
    }

    /**
     * The exception for {@code why}, in one line: a driver's or JCuda's error text can run to dozens
     * of lines (JCuda lists every native library path it tried), which stay in the cause.
     */
    public static BackendUnavailableException because(String why, Throwable cause) {
        String message = "the GPU backend cannot run here: " + oneLine(why);
        return cause == null ? new BackendUnavailableException(message) : new BackendUnavailableException(message, cause);
    }

    /** The first line of {@code text}, at most 300 characters. */
    public static String oneLine(String text) {
        String first = text == null ? "" : text.strip().lines().findFirst().orElse("");
        return first.length() <= 300 ? first : first.substring(0, 297) + "...";
    }
}
