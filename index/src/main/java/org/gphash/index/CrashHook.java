package org.gphash.index;

/**
 * Told at each persist point of every operation. The engine's default does nothing; tests and the
 * crash harness install one that throws at a chosen point to simulate a crash there.
 */
@FunctionalInterface
public interface CrashHook {

    CrashHook NONE = point -> { };

    void reached(CrashPoint point);
}
