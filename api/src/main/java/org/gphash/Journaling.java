package org.gphash;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * A journal and checkpoints on a durable file system, so that the index survives a power cut
 * although its pool does not (a GPU pool on tmpfs or hugetlbfs; a CPU pool anywhere), set on the
 * builder with {@link GPHashIndex.Builder#journal}. Every acknowledged write's effect is appended to
 * the journal in {@link #directory()} and, with {@link Flush#PER_CALL} (the default), flushed before
 * its call or batch returns; one flush covers every caller waiting for it. In the background the
 * index's entries are written to a checkpoint, consistent as of a journal sequence number, and the
 * journal before it is dropped. An open that finds the pool gone, or older than the machine's last
 * boot, rebuilds it from the newest complete checkpoint and the journal after it (docs/USAGE.md,
 * "Durable without persistent memory", has what survives what).
 *
 * <p>Immutable; each {@code withX} returns a copy.
 *
 * @param directory          where the journal's segments, the checkpoints and the journal's state
 *                           live: a directory on a durable file system (ext4, xfs), owned by this user
 * @param flush              when appended records are flushed to the disk
 * @param flushInterval      with {@link Flush#INTERVAL}, how often; the loss window after a power cut
 * @param checkpointInterval how often a checkpoint starts (zero: only {@link GPHashIndex#checkpoint()}
 *                           and the journal-size trigger start one)
 * @param checkpointAfterBytes a checkpoint starts once this many journal bytes were written since the last one
 * @param segmentBytes       the size at which the journal moves on to a new segment file
 */
public record Journaling(Path directory, Flush flush, Duration flushInterval, Duration checkpointInterval,
                         long checkpointAfterBytes, long segmentBytes) {

    /** When the journal is flushed to its disk. */
    public enum Flush {
        /** Before each call or batch that wrote returns (group commit: one flush serves every caller waiting). The default. */
        PER_CALL,
        /** Every {@link #flushInterval()}: calls return without waiting; a power cut loses at most that window. */
        INTERVAL,
        /** Never on its own: only at a checkpoint, {@link GPHashIndex#sync()} and close. A power cut loses what came after. */
        NEVER
    }

    /** The default checkpoint interval: five minutes. */
    public static final Duration DEFAULT_CHECKPOINT_INTERVAL = Duration.ofMinutes(5);
    /** The default journal size that starts a checkpoint: 1 GiB. */
    public static final long DEFAULT_CHECKPOINT_AFTER_BYTES = 1L << 30;
    /** The default segment size: 256 MiB. */
    public static final long DEFAULT_SEGMENT_BYTES = 256L << 20;

    /** Checks the settings: each names what is wrong in its exception. */
    public Journaling {
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(flush, "flush");
        Objects.requireNonNull(flushInterval, "flushInterval");
        Objects.requireNonNull(checkpointInterval, "checkpointInterval");
        if (flush == Flush.INTERVAL && (flushInterval.isNegative() || flushInterval.isZero())) {
            throw new IllegalArgumentException("a journal flushed at intervals needs a positive interval, got " + flushInterval);
        }
        if (checkpointInterval.isNegative()) {
            throw new IllegalArgumentException("checkpointInterval must not be negative, got " + checkpointInterval);
        }
        if (checkpointAfterBytes < 1) {
            throw new IllegalArgumentException("checkpointAfterBytes must be positive, got " + checkpointAfterBytes);
        }
        if (segmentBytes < (1 << 20)) {
            throw new IllegalArgumentException("segmentBytes must be at least 1 MiB, got " + segmentBytes);
        }
    }

    /**
     * A journal in {@code directory} with the defaults: flushed before each call returns, a checkpoint
     * every five minutes or after 1 GiB of journal, segments of 256 MiB.
     *
     * @param directory the journal's directory (made if missing)
     * @return the settings
     */
    public static Journaling in(Path directory) {
        return new Journaling(directory, Flush.PER_CALL, Duration.ZERO, DEFAULT_CHECKPOINT_INTERVAL,
                DEFAULT_CHECKPOINT_AFTER_BYTES, DEFAULT_SEGMENT_BYTES);
    }

    /**
     * Flushed every {@code interval} instead of before each call returns: writes return sooner, and a
     * power cut may take back what was acknowledged in the last {@code interval}.
     *
     * @param interval the flush interval, positive
     * @return the changed settings
     */
    public Journaling flushEvery(Duration interval) {
        return new Journaling(directory, Flush.INTERVAL, interval, checkpointInterval, checkpointAfterBytes, segmentBytes);
    }

    /**
     * Never flushed on its own (only at checkpoints, sync and close).
     *
     * @return the changed settings
     */
    public Journaling flushNever() {
        return new Journaling(directory, Flush.NEVER, Duration.ZERO, checkpointInterval, checkpointAfterBytes, segmentBytes);
    }

    /**
     * Flushed before each call or batch returns (the default).
     *
     * @return the changed settings
     */
    public Journaling flushPerCall() {
        return new Journaling(directory, Flush.PER_CALL, Duration.ZERO, checkpointInterval, checkpointAfterBytes, segmentBytes);
    }

    /**
     * A checkpoint every {@code interval} (zero: none on a timer).
     *
     * @param interval the interval
     * @return the changed settings
     */
    public Journaling checkpointEvery(Duration interval) {
        return new Journaling(directory, flush, flushInterval, interval, checkpointAfterBytes, segmentBytes);
    }

    /**
     * A checkpoint once {@code bytes} of journal were written since the last one.
     *
     * @param bytes the journal size
     * @return the changed settings
     */
    public Journaling checkpointAfterBytes(long bytes) {
        return new Journaling(directory, flush, flushInterval, checkpointInterval, bytes, segmentBytes);
    }

    /**
     * Segment files of {@code bytes}.
     *
     * @param bytes the segment size, at least 1 MiB
     * @return the changed settings
     */
    public Journaling segmentBytes(long bytes) {
        return new Journaling(directory, flush, flushInterval, checkpointInterval, checkpointAfterBytes, bytes);
    }
}
