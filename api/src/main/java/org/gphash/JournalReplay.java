package org.gphash;

import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * What an open of a journaled index ({@link Journaling}) did with its journal, part of
 * {@link RecoveryReport#journal()}: nothing beyond finding the journal's end where the pool was
 * intact (a process crash or a clean close on this boot), or a rebuild of the pool from the newest
 * complete checkpoint and the journal after it.
 *
 * @param rebuilt            whether the pool was rebuilt from checkpoint and journal
 * @param why                why it was rebuilt (the pool was missing, was made before the machine's last boot, ...), or what was found
 * @param checkpoint         the checkpoint loaded, by file name, or "" where none was
 * @param checkpointSeq      the journal sequence number the checkpoint is consistent as of (replay started there)
 * @param checkpointEntries  the entries the checkpoint held
 * @param recordsReplayed    journal records replayed
 * @param operationsReplayed the writes those records held
 * @param lastSeq            the sequence number of the last valid record, or -1 where the journal holds none
 * @param cut                where replay stopped before the journal's end (a torn last record), or "" where it reached the end
 * @param checkpointLoad     of {@code duration}, how long reading, checking and loading the checkpoint took
 * @param duration           how long the journal's part of the open took
 */
public record JournalReplay(boolean rebuilt, String why, String checkpoint, long checkpointSeq, long checkpointEntries,
                            long recordsReplayed, long operationsReplayed, long lastSeq, String cut, Duration checkpointLoad,
                            Duration duration) implements Serializable {

    /** For an index without a journal. */
    public static final JournalReplay NONE = new JournalReplay(false, "no journal", "", 0, 0, 0, 0, -1, "", Duration.ZERO,
            Duration.ZERO);

    /** Checks that no component is null. */
    public JournalReplay {
        Objects.requireNonNull(why, "why");
        Objects.requireNonNull(checkpoint, "checkpoint");
        Objects.requireNonNull(cut, "cut");
        Objects.requireNonNull(checkpointLoad, "checkpointLoad");
        Objects.requireNonNull(duration, "duration");
    }

    @Override
    public String toString() {
        if (this == NONE) {
            return "journal: none";
        }
        return "journal: " + (rebuilt ? "pool rebuilt (" + why + ") from "
                + (checkpoint.isEmpty() ? "no checkpoint" : "checkpoint " + checkpoint + " (seq " + checkpointSeq + ", "
                + checkpointEntries + " entries)") + ", " + recordsReplayed + " records (" + operationsReplayed
                + " writes) replayed" : "pool intact (" + why + ")")
                + ", last record seq " + lastSeq + (cut.isEmpty() ? "" : ", cut: " + cut)
                + ", took " + duration.toMillis() + " ms" + (rebuilt ? " (checkpoint " + checkpointLoad.toMillis() + " ms)" : "");
    }
}
