package org.gphash.journal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.gphash.error.GPHashException;

/**
 * Verifies a journal directory without changing it, for {@code gphash check --journal}: the state
 * file, every record of every segment (checksums, lengths, sequence numbers without a gap), and
 * every chunk of the newest checkpoint; and says whether an open would trust the pool or rebuild it.
 */
public final class JournalCheck {

    /**
     * What the check found.
     *
     * @param segments        journal segment files
     * @param records         valid records
     * @param firstSeq        the first record's sequence number (or the first segment's start)
     * @param lastSeq         the last valid record's sequence number, -1 if none
     * @param bytes           bytes in the segments
     * @param tornTail        the torn last record an open would cut, or ""
     * @param checkpoint      the newest checkpoint's file name, or ""
     * @param checkpointSeq   the sequence number it is consistent as of
     * @param checkpointEntries its entries
     * @param poolVerdict     what an open would do with the pool
     * @param damage          the damage found (the open would refuse), or "" when sound
     */
    public record Report(int segments, long records, long firstSeq, long lastSeq, long bytes, String tornTail,
                         String checkpoint, long checkpointSeq, long checkpointEntries, String poolVerdict, String damage) {

        /** {@return whether nothing stops an open (a torn last record does not)} */
        public boolean sound() {
            return damage.isEmpty();
        }

        /** {@return the report as lines of text} */
        public List<String> lines() {
            List<String> out = new ArrayList<>();
            out.add("segments: " + segments + " (" + bytes + " bytes), records " + records
                    + (lastSeq >= 0 ? " (sequence numbers " + firstSeq + " to " + lastSeq + ")" : ""));
            out.add("torn last record: " + (tornTail.isEmpty() ? "none" : tornTail));
            out.add("checkpoint: " + (checkpoint.isEmpty() ? "none" : checkpoint + " (as of sequence number "
                    + checkpointSeq + ", " + checkpointEntries + " entries), every chunk verified"));
            out.add("pool: " + poolVerdict);
            if (!damage.isEmpty()) {
                out.add("DAMAGED: " + damage);
            }
            return out;
        }
    }

    private JournalCheck() {
    }

    /**
     * Checks the journal in {@code dir} that stands behind the pool at {@code pool}.
     *
     * @param dir  the journal directory
     * @param pool the pool file
     * @return what was found
     */
    public static Report check(Path dir, Path pool) {
        JournalState state;
        try {
            state = JournalState.read(dir);
        } catch (GPHashException e) {
            return new Report(0, 0, 0, -1, 0, "", "", 0, 0, "unknown", e.getMessage());
        }
        if (state == null) {
            return new Report(0, 0, 0, -1, 0, "", "", 0, 0, "unknown", "no journal in " + dir + " (no " + JournalFiles.STATE + ")");
        }
        List<Path> segments = JournalFiles.list(dir, false);
        long bytes = 0;
        for (Path s : segments) {
            try {
                bytes += Files.size(s);
            } catch (IOException e) {
                return new Report(segments.size(), 0, 0, -1, 0, "", "", 0, 0, "unknown", "cannot read " + s + ": " + e.getMessage());
            }
        }
        long first = segments.isEmpty() ? 1 : JournalFiles.seqOf(segments.get(0), false);
        long[] records = {0};
        String checkpointName = "";
        long cpSeq = 0;
        long cpEntries = 0;
        String damage = "";
        String torn = "";
        long last = -1;
        try {
            List<Path> cps = JournalFiles.list(dir, true);
            long from = 0;
            if (!cps.isEmpty()) {
                Checkpoint.Summary s = Checkpoint.read(cps.get(cps.size() - 1), state.keySize(), state.valueSize(),
                        state.journalId(), null);
                checkpointName = s.file().getFileName().toString();
                cpSeq = s.startSeq();
                cpEntries = s.entries();
                from = s.startSeq();
            }
            JournalReader.End end = new JournalReader(dir, state.keySize(), state.valueSize(), state.journalId())
                    .read(0, cps.isEmpty() ? 1 : from, r -> records[0]++);
            torn = end.cut();
            last = end.nextSeq() - 1;
        } catch (GPHashException e) {
            damage = e.getMessage();
        }
        String boot = JournalState.currentBoot();
        String verdict = !Files.exists(pool, LinkOption.NOFOLLOW_LINKS) ? "missing: an open rebuilds it from checkpoint and journal"
                : state.poolIdentity() == 0 ? "a rebuild was interrupted: an open rebuilds it"
                : !"unknown".equals(boot) && !boot.equals(state.bootId()) ? "made before the machine's last boot: an open rebuilds it"
                : "trusted if its identity is " + Long.toHexString(state.poolIdentity()) + " (it was made on this boot)";
        return new Report(segments.size(), records[0], first, last, bytes, torn, checkpointName, cpSeq, cpEntries, verdict, damage);
    }
}
