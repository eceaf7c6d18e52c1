package org.gphash.error;

import java.nio.file.Path;

/**
 * A journal segment, a checkpoint or the journal's state file holds damage a crash cannot leave (a
 * record that fails its checksum with valid records after it, a gap in the sequence numbers, a
 * checkpoint chunk that fails its checksum): the open is refused and nothing is applied, rather than
 * a part of the journal silently. The message names the file, the byte offset and, where known, the
 * record's sequence number. A torn last record (a power cut during its write) is not damage: replay
 * stops before it and {@code JournalReplay.cut()} says so.
 */
public final class JournalDamagedException extends GPHashException {
    private static final long serialVersionUID = 1L;

    /** The damaged file. */
    private final transient Path file;
    /** The byte offset of the damage in it. */
    private final long offset;

    /**
     * A refusal naming the file, the offset and what is wrong there.
     *
     * @param file   the damaged file
     * @param offset the byte offset of the damaged record or chunk in it
     * @param detail what is wrong there
     */
    public JournalDamagedException(Path file, long offset, String detail) {
        super(file + " at byte " + offset + ": " + detail + "; nothing was applied (docs/USAGE.md, \"Durable without "
                + "persistent memory\", says what to do)");
        this.file = file;
        this.offset = offset;
    }

    /** {@return the damaged file} */
    public Path file() {
        return file;
    }

    /** {@return the byte offset of the damage in the file} */
    public long offset() {
        return offset;
    }
}
