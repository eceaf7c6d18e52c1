package org.gphash.spi;

/**
 * Where a scan of an index's live entries stands ({@link Engine#startScan()}, {@link
 * Engine#readEntries}): opaque to the caller, which only asks whether it is done. Each engine makes and
 * reads its own; one engine's state passed to another is refused.
 */
public interface ScanState {

    /** {@return whether every entry has been read} */
    boolean done();
}
