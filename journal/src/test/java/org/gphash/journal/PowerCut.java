package org.gphash.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

import org.gphash.GPHashIndex;

/**
 * A simulated power cut for tests: the process's open index is dropped as a crash would drop it, the
 * pool (on tmpfs) is gone, and every journal segment loses what was not forced, but for a random part
 * of its unforced tail that the kernel may have written back (so the last record can be torn).
 * Checkpoint temporaries go too. What was forced is known from the journal's flush observer.
 */
final class PowerCut {

    /** Durable bytes per segment, by the segment's first sequence number. */
    static final Map<Long, Long> DURABLE = new ConcurrentHashMap<>();

    static {
        Journals.observeFlushes((segment, bytes) -> DURABLE.merge(segment, bytes, Math::max));
    }

    private PowerCut() {
    }

    /** Starts observing (clears what earlier tests recorded). */
    static void reset() {
        DURABLE.clear();
    }

    /** Cuts the power under {@code index}: see the class comment. {@code random} null keeps nothing unforced. */
    static void cut(GPHashIndex index, Path pool, Path journalDir, Random random) {
        index.engine().abandon();
        try {
            Files.deleteIfExists(pool);
            for (Path seg : JournalFiles.list(journalDir, false)) {
                long durable = DURABLE.getOrDefault(JournalFiles.seqOf(seg, false), (long) RecordFormat.SEGMENT_HEADER);
                long size = Files.size(seg);
                long keep = durable;
                if (random != null && size > durable) {
                    keep += random.nextLong(size - durable + 1);
                }
                if (keep < size) {
                    try (FileChannel ch = FileChannel.open(seg, StandardOpenOption.WRITE)) {
                        ch.truncate(keep);
                    }
                }
            }
            JournalFiles.removeTemporaries(journalDir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
