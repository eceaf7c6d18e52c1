package org.gphash.bench;

import java.io.IOException;

/** A trace file that is not a trace, of another version, or damaged; the message says where. */
public final class TraceFormatException extends IOException {
    private static final long serialVersionUID = 1L;

    public TraceFormatException(String message) {
        super(message);
    }
}
