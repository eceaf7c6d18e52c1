package org.gphash.spi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The off-heap memory behind a {@link org.gphash.Batch} or a {@link org.gphash.BatchResult}: one
 * page-aligned block of whole pages, freed by the garbage collector once nothing refers to it (nor to
 * a slice of it). An engine that moves batches by DMA may pin the block once ({@link #pin(Runnable)}):
 * it then copies between the block and the device directly, with no staging copy, and the block is
 * unpinned before it is freed.
 *
 * <p>Why the engine and not the batch decides: pinning costs about as much as copying the block
 * once, so it pays only for a batch that is run again ({@link #noteUse()} counts runs). Thread-safe.
 */
public final class HostMemory {

    private static final long PAGE = 4096;
    private static final Cleaner CLEANER = Cleaner.create();

    private final MemorySegment segment;
    private final State state;

    private HostMemory(long bytes) {
        long size = Math.max(PAGE, (bytes + PAGE - 1) / PAGE * PAGE);
        // An automatic arena: freeing needs no handshake with every thread (a shared arena's close
        // does), and a slice a caller still holds keeps the memory valid. Unpinned memory goes back
        // after one collection, as the JDK's direct-memory accounting expects; once pinned, the
        // cleaner's state holds it until it has unpinned it, so pages are never freed while pinned.
        this.segment = Arena.ofAuto().allocate(size, PAGE);
        this.state = new State();
        CLEANER.register(this, state);
    }

    /**
     * A zeroed block of at least {@code bytes} (whole pages, page-aligned).
     *
     * @param bytes the least size
     * @return the block
     */
    public static HostMemory allocate(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("a negative size: " + bytes);
        }
        return new HostMemory(bytes);
    }

    /** {@return the whole block} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return whether an engine pinned the block} */
    public boolean pinned() {
        return state.unpin != null;
    }

    /** {@return whether an engine tried to pin the block and could not (it will not try again)} */
    public boolean pinRefused() {
        return state.refused;
    }

    /**
     * Counts one run of the batch or result this block holds.
     *
     * @return the runs counted so far, this one included
     */
    public synchronized int noteUse() {
        return ++state.uses;
    }

    /**
     * Records that an engine pinned the block; {@code unpin} runs once, before the block is freed.
     *
     * @param unpin what undoes the pinning (it must not refer to this block or its owner)
     * @throws IllegalStateException if the block is pinned already
     */
    public synchronized void pin(Runnable unpin) {
        if (state.unpin != null) {
            throw new IllegalStateException("the block is pinned already");
        }
        state.memory = segment;
        state.unpin = unpin;
    }

    /** Records that pinning failed, so that no engine tries again. */
    public synchronized void refusePin() {
        state.refused = true;
    }

    /** What the cleaner holds: never the block itself, or the block would never become unreachable. */
    private static final class State implements Runnable {
        /**
         * Memory whose unpinning failed: kept for the life of the process (freeing pages a device may
         * still reach is worse than a leak).
         */
        private static final Set<MemorySegment> KEPT = ConcurrentHashMap.newKeySet();

        /** The pinned memory, held until it is unpinned; null while not pinned. */
        private volatile MemorySegment memory;
        private volatile Runnable unpin;
        private volatile boolean refused;
        private int uses;

        @Override
        public void run() {
            Runnable u = unpin;
            if (u != null) {
                try {
                    u.run();
                } catch (RuntimeException | Error e) {
                    KEPT.add(memory);
                    throw e;
                }
            }
            memory = null;  // now the automatic arena may free it
        }
    }
}
