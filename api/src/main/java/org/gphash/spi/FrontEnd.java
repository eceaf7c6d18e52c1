package org.gphash.spi;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.gphash.CoalescerStats;
import org.gphash.Coalescing;
import org.gphash.OpKind;
import org.gphash.OperationStats;
import org.gphash.Outcome;

/**
 * What the index puts in front of its engine for many callers: single calls merged into the
 * engine's batches ({@link Coalescing}), the host read cache of hot keys, and the counting and timing
 * of calls ({@code recordStats()}). gphash-frontend provides it (Caffeine and HdrHistogram are its
 * dependencies, not the index's), found through {@link java.util.ServiceLoader} by its
 * {@link Factory}; the GPU engine's module brings it along. Without it calls go to the engine
 * directly, and an index that needs it (coalescing asked for with {@link Coalescing.Mode#ON}, or
 * {@code recordStats()}) is refused before anything is opened, naming the module.
 */
public interface FrontEnd {

    /** {@return the engine the index calls: the backend behind the front end's layers} */
    Engine engine();

    /**
     * The backend itself, for what only it offers (the GPU engine's device batches). Writes through
     * it would bypass the host read cache, which is therefore turned off.
     *
     * @return the backend
     */
    Engine backend();

    /** {@return whether single calls are merged into batches (then {@link #submit} and {@link #getAsync} queue them)} */
    boolean coalesces();

    /**
     * Queues a get; only when {@link #coalesces()}.
     *
     * @param key the key
     * @return the value (a new array) or null when absent, once its batch has run
     */
    CompletableFuture<byte[]> getAsync(MemorySegment key);

    /**
     * Queues a write (PUT, INSERT, UPDATE or DELETE; key and value copied now); only when
     * {@link #coalesces()}.
     *
     * @param kind  the operation
     * @param key   the key
     * @param value the value, or null for DELETE
     * @return its outcome, once its batch has run
     */
    CompletableFuture<Outcome> submit(OpKind kind, MemorySegment key, MemorySegment value);

    /** {@return what the coalescer did, when calls are merged} */
    Optional<CoalescerStats> coalescerStats();

    /** {@return the calls' counts and latencies when they are recorded, else {@link OperationStats#NONE}} */
    OperationStats operationStats();

    /** Makes front ends; a {@link java.util.ServiceLoader} provider. */
    interface Factory {

        /**
         * A front end over {@code backend}.
         *
         * @param backend     the engine
         * @param coalescing  the coalescer's settings, or null to merge nothing
         * @param recordStats whether to count and time calls
         * @param pool        the pool, for the errors of calls after close
         * @return the front end
         */
        FrontEnd over(Engine backend, Coalescing coalescing, boolean recordStats, Path pool);
    }
}
