package org.gphash.crashtest;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.gphash.PersistenceMode;
import org.gphash.persistence.PersistRanges;
import org.gphash.persistence.Persister;
import org.gphash.persistence.PersisterDecorator;

/**
 * Simulated power failure. A process kill cannot reveal a missing persist: the page cache (or
 * tmpfs) keeps every store the process made. This decorator keeps a shadow copy of the pool as it
 * would be after a power cut: the file as it was mapped, updated only by the ranges the engine
 * passes to {@link Persister#persist} (widened to whole 64-byte cache lines, the finest unit a real
 * flush writes). At a simulated power failure the shadow is written to an image beside the pool
 * ({@link #imageOf}), which discards every store that was made but never persisted, and the process
 * halts at once; the driver puts the image in the pool's place.
 *
 * <p>It is stricter than real hardware (which may also write back unpersisted lines at any time)
 * and that is the point: any state it produces is one real hardware can produce, and a missing
 * persist makes the next open lose data, which the driver's checks see.
 *
 * <p>The failure comes at the n-th persist call (the persisted image only changes at persist calls,
 * so failing just before one of them reaches every distinct persisted state) or at a crash point.
 * A test-only mutation ({@code dropMetaPersists}) ignores every 8-byte persist (the persists that
 * publish, update and clear slot meta words), as if the engine had lost them: the harness must then
 * report lost operations.
 */
final class ShadowPersistence implements PersisterDecorator {

    static final int CACHE_LINE = 64;
    /** Exit status of a worker that simulated a power failure. */
    static final int POWER_FAIL_EXIT = 86;
    /** Exit status of a worker whose engine persisted a range the shadow does not cover (a harness or engine defect). */
    static final int PERSIST_BEYOND_SHADOW_EXIT = 87;

    private long failAtPersist;
    private final String failSite;
    private int failSiteCountdown;
    private final boolean dropMetaPersists;
    private final Runnable beforeHalt;
    private MemorySegment shadow;
    private MemorySegment mapping;
    private long persists;
    private volatile boolean armed = true;

    /**
     * @param failAtPersist     fail just before this persist call (1-based); 0 for never
     * @param dropMetaPersists  the mutation: ignore 8-byte persists
     * @param beforeHalt        told after the revert, before the halt (the worker records the site)
     */
    ShadowPersistence(long failAtPersist, boolean dropMetaPersists, Runnable beforeHalt) {
        this(failAtPersist, null, 0, dropMetaPersists, beforeHalt);
    }

    /**
     * As above, and also fail just before the {@code failSiteCount}-th persist called from
     * {@code failSite} (engine {@code Class.method}, as {@link #callSite()} names it), if not null.
     */
    ShadowPersistence(long failAtPersist, String failSite, int failSiteCount, boolean dropMetaPersists,
                      Runnable beforeHalt) {
        this.failSite = failSite;
        this.failSiteCountdown = failSiteCount;
        this.failAtPersist = failAtPersist;
        this.dropMetaPersists = dropMetaPersists;
        this.beforeHalt = beforeHalt;
    }

    /** The pool file, where the power cut's image goes beside ({@link #imageOf}). */
    private Path pool;

    @Override
    public synchronized Persister decorate(Path path, MemorySegment newMapping, Persister chosen) {
        pool = path;
        long size = newMapping.byteSize();
        MemorySegment grown = Arena.ofAuto().allocate(Math.max(1, size), CACHE_LINE);
        long kept = 0;
        if (shadow != null) {
            // What was persisted before the growth stays as it was persisted; the new tail was
            // written through the file channel and forced by the growth, so it is durable as mapped.
            kept = Math.min(shadow.byteSize(), size);
            MemorySegment.copy(shadow, 0, grown, 0, kept);
        }
        MemorySegment.copy(newMapping, kept, grown, kept, size - kept);
        shadow = grown;
        mapping = newMapping;
        return new Persister() {
            @Override
            public void persist(MemorySegment m, long offset, long length) {
                recordPersist(m, offset, length);
                chosen.persist(m, offset, length);
            }

            /**
             * A phase: each range counts as a persist of its own, so a power failure can strike
             * with part of a phase durable (msync writes pages back in no promised order).
             */
            @Override
            public void persistAll(MemorySegment m, PersistRanges ranges) {
                for (int i = 0; i < ranges.size(); i++) {
                    recordPersist(m, ranges.offset(i), ranges.length(i));
                }
                chosen.persistAll(m, ranges);
            }

            /** The shadow keeps whole cache lines: never more than the line, whatever the medium. */
            @Override
            public int atomicWriteUnit() {
                return Math.min(CACHE_LINE, chosen.atomicWriteUnit());
            }

            @Override
            public PersistenceMode mode() {
                return chosen.mode();
            }
        };
    }

    private synchronized void recordPersist(MemorySegment m, long offset, long length) {
        persists++;
        if (armed && persists == failAtPersist) {
            powerFail();
        }
        // Walking the stack costs, so only rounds aimed at a call site do it.
        if (armed && failSite != null && failSite.equals(callSite()) && --failSiteCountdown == 0) {
            powerFail();
        }
        if (dropMetaPersists && length == 8) {
            return;
        }
        if (offset + length > shadow.byteSize() || offset + length > m.byteSize()) {
            // A persist the shadow cannot record would be silently lost (issue 52): say so and stop.
            System.err.println("ShadowPersistence: persist of [" + offset + ", " + (offset + length) + ") from "
                    + callSite() + " lies beyond the shadow (" + shadow.byteSize() + " bytes) or the segment it came with ("
                    + m.byteSize() + " bytes); mapping " + mapping.byteSize() + " bytes");
            Runtime.getRuntime().halt(PERSIST_BEYOND_SHADOW_EXIT);
        }
        long start = offset & -CACHE_LINE;
        long end = Math.min(m.byteSize(), Math.min(shadow.byteSize(), (offset + length + CACHE_LINE - 1) & -CACHE_LINE));
        copyAscending(m, shadow, start, end);
    }

    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();

    /**
     * Copies {@code [start, end)} (8-byte aligned) word by word in ascending address order, each read
     * an acquire, as a device writing a line or page back reads it. Other threads go on storing into
     * these lines while they are copied, so the copy may mix older and newer words; in this order a
     * slot's meta word (before its key) is never newer than its key. {@code MemorySegment.copy} promises
     * no order (HotSpot copies backwards when the target lies above the source).
     */
    private static void copyAscending(MemorySegment from, MemorySegment to, long start, long end) {
        for (long at = start; at < end; at += Long.BYTES) {
            WORD.set(to, at, (long) WORD.getAcquire(from, at));
        }
    }

    /** Fails just before the {@code k}-th persist call from now (a worker about to close its pool). */
    synchronized void failAfter(int k) {
        failAtPersist = persists + k;
    }

    /** Persist calls seen so far. */
    synchronized long persists() {
        return persists;
    }

    /**
     * The power failure: what the medium holds (the shadow) is written whole to
     * {@link #imageOf the pool's power-cut image}, then the process stops dead (no shutdown hooks, no
     * finally blocks). The driver puts the image in the pool's place.
     *
     * <p>Not by overwriting the live mapping with the shadow, as this did before (issue 52 item 1):
     * the other writer threads run on until the halt, and a store one of them made after that revert
     * (a meta word published over a key the revert had just set back to zero) reached the file. Three
     * pools kept in 1,800 rounds of three threads held exactly that item, which recovery rightly refused.
     */
    synchronized void powerFail() {
        armed = false;
        writeImage();
        beforeHalt.run();
        Runtime.getRuntime().halt(POWER_FAIL_EXIT);
    }

    /** Where a worker's power cut leaves the pool's image: beside the pool, for the driver to move into its place. */
    static Path imageOf(Path pool) {
        return pool.resolveSibling(pool.getFileName() + ".powercut");
    }

    /** What the medium holds now: the shadow, and any tail of the mapping it does not cover, as it is. */
    synchronized MemorySegment image() {
        long n = Math.min(shadow.byteSize(), mapping.byteSize());
        MemorySegment out = Arena.ofAuto().allocate(Math.max(1, mapping.byteSize()), CACHE_LINE);
        MemorySegment.copy(shadow, 0, out, 0, n);
        if (mapping.byteSize() > n) {
            MemorySegment.copy(mapping, n, out, n, mapping.byteSize() - n);
        }
        return out.asSlice(0, mapping.byteSize());
    }

    /** Writes {@link #image()} beside the pool, forced, owner-only. */
    private void writeImage() {
        Path image = imageOf(pool);
        Path tmp = image.resolveSibling(image.getFileName() + ".tmp");
        MemorySegment bytes = image();
        try {
            Files.deleteIfExists(tmp);
            try (FileChannel ch = FileChannel.open(tmp, Set.of(
                    StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rw-------")))) {
                write(ch, bytes.asByteBuffer());
                ch.force(true);
            }
            Files.move(tmp, image, StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            System.err.println("ShadowPersistence: cannot write the power cut's image " + image + ": " + e);
            Runtime.getRuntime().halt(1);
        }
    }

    private static void write(FileChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** Where the engine's persist calls come from: the table's code, the CPU engine's and the pool format's (header commits). */
    static final List<String> ENGINE_PACKAGES = List.of("org.gphash.table.", "org.gphash.index.", "org.gphash.format.");

    /** The engine method that called persist, for reporting which persist point a failure hit. */
    static String callSite() {
        Optional<String> site = StackWalker.getInstance().walk(frames -> frames
                .filter(f -> ENGINE_PACKAGES.stream().anyMatch(p -> f.getClassName().startsWith(p))
                        && !f.getClassName().contains("$"))
                .filter(f -> !f.getMethodName().equals("persist"))
                .findFirst()
                .map(f -> f.getClassName().substring(f.getClassName().lastIndexOf('.') + 1) + "." + f.getMethodName()));
        return site.orElse("?");
    }
}
