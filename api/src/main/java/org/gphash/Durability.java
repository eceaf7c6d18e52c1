package org.gphash;

/**
 * When the CPU engine's writes become durable, chosen in {@link GPHashIndex.Builder#durability}.
 * Crash consistency is the same in every mode: after a crash each operation is wholly applied or
 * not at all, and recovery on open repairs what was in flight. The modes differ in which
 * acknowledged operations a crash may take back, and in what they cost on a disk (docs/DESIGN.md,
 * "Durability modes"; figures in docs/PERFORMANCE.md). On tmpfs nothing is flushed in any mode
 * (the file is memory: it survives a process crash and never a power cut).
 *
 * <p>The GPU engine's batches persist per phase already (values, keys, meta words, each fenced),
 * so it runs every mode as {@link #PER_BATCH}.
 */
public enum Durability {

    /**
     * Each operation is durable when it returns, inside a batch too: every persist point of the
     * slot protocol flushes (an msync or a flush-and-drain each). The cost on a disk: three
     * synchronous writes per write operation.
     */
    PER_OPERATION,

    /**
     * A batch is durable when {@code execute} returns. Its writes are persisted together in two
     * phases: first every new value and every key written into a claimed slot, then every slot
     * meta word that publishes, updates or clears an item; one msync (or one flush of each range
     * and one drain) per phase. No meta word is stored before the values and keys it refers to are
     * durable, and no value block a batch unlinks is reused before that batch's meta words are, so
     * a crash at any moment (writeback of any page at any time included) leaves each operation whole
     * or absent. Single operations outside a batch are batches of one. The default.
     */
    PER_BATCH,

    /**
     * Durable at {@link GPHashIndex#sync()} and {@link GPHashIndex#close()} only; operations flush
     * nothing. After a process crash (SIGKILL, a JVM crash) nothing acknowledged is lost: the page
     * cache outlives the process, and recovery repairs what was in flight. After a power failure or
     * an operating-system crash the pool holds what was synced, plus whatever pages the kernel
     * happened to write back since, in no order: recovery then refuses the pool if that left damage
     * a crash cannot explain ({@code DAMAGE_BEYOND_CRASH}; {@code gphash recover --force} clears it),
     * and a value may be stale. Use it for data that can be rebuilt, or for bulk loads that end in
     * {@code sync()}.
     */
    ON_CLOSE_OR_SYNC
}
