package org.gphash.journal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/** What the journal's byte-level tests do alike: copy a journal, and read a segment's bytes as a journal of one. */
final class JournalTestFiles {

    private JournalTestFiles() {
    }

    /** Copies the journal in {@code from} (all but its lock file) into a new owner-only directory {@code dir}. */
    static void copyJournal(Path from, Path dir) throws IOException {
        Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        try (var files = Files.list(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (!f.getFileName().toString().equals(JournalFiles.LOCK)) {
                    Files.copy(f, dir.resolve(f.getFileName()));
                }
            }
        }
    }

    /**
     * Reads a journal directory {@code dir} holding {@code bytes} as its one segment, named as
     * {@code segment}; returns the sequence numbers replayed, and where the valid records end in {@code end[0]}.
     */
    static List<Long> readSegment(Path dir, Path segment, byte[] bytes, int valueSize, long journalId,
                                  JournalReader.End[] end) throws IOException {
        Files.createDirectories(dir);
        Files.write(dir.resolve(segment.getFileName()), bytes);
        List<Long> seqs = new ArrayList<>();
        end[0] = new JournalReader(dir, 8, valueSize, journalId).read(0, -1, r -> seqs.add(r.seq()));
        return seqs;
    }
}
