package org.gphash.spi;

/**
 * Told at each persist point of every operation. The engine's default does nothing; tests and the
 * crash harness install one ({@link org.gphash.GPHashConfig#withCrashHook}) that throws, parks or
 * records at a chosen point to simulate a crash there. Part of the SPI: an application has no use
 * for it.
 */
@FunctionalInterface
public interface CrashHook {

    /** The default: does nothing. */
    CrashHook NONE = point -> { };

    /**
     * The engine reached {@code point}; what this throws propagates out of the operation, which is
     * then left as a crash at that point would leave it.
     *
     * @param point the persist point
     */
    void reached(CrashPoint point);
}
