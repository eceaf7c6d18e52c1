package org.gphash.spi;

import org.gphash.GPHashConfig;

/**
 * Puts a journal and checkpoints ({@link org.gphash.Journaling}) around an engine: implemented by
 * gphash-journal, found through {@link java.util.ServiceLoader} when a builder names a journal. The
 * factory decides whether the pool can be trusted or must be rebuilt from checkpoint and journal, and
 * makes or opens it through {@link Pools}.
 */
public interface JournalFactory {

    /**
     * How the factory makes, opens and removes the pool behind the journal: the builder's own routes,
     * so that a journaled index gets the same engine an index without one would.
     */
    interface Pools {
        /**
         * Creates the pool {@code config} names.
         *
         * @param config the pool's settings
         * @return its engine
         */
        Engine create(GPHashConfig config);

        /**
         * Opens the pool {@code config} names, running its recovery.
         *
         * @param config the pool's settings
         * @return its engine
         */
        Engine open(GPHashConfig config);
    }

    /**
     * A new index: the journal's directory must hold no journal yet.
     *
     * @param config the settings, {@link GPHashConfig#journaling()} among them
     * @param pools  how the pool is made
     * @return the journaled engine (a {@link Checkpointing} too)
     */
    Engine create(GPHashConfig config, Pools pools);

    /**
     * An existing index: its pool where it is intact, else rebuilt from checkpoint and journal.
     *
     * @param config the settings, {@link GPHashConfig#journaling()} among them
     * @param pools  how the pool is made or opened
     * @return the journaled engine (a {@link Checkpointing} too)
     */
    Engine open(GPHashConfig config, Pools pools);

    /**
     * Whether {@code config}'s journal directory holds a journal (so that an open can rebuild the
     * pool although the pool file is gone).
     *
     * @param config the settings
     * @return whether a journal is there
     */
    boolean hasJournal(GPHashConfig config);

    /** What a journaled engine adds: a checkpoint on demand. */
    interface Checkpointing {
        /**
         * Writes a checkpoint now and returns when it is complete and durable.
         *
         * @return the journal sequence number the checkpoint is consistent as of
         */
        long checkpoint();
    }
}
