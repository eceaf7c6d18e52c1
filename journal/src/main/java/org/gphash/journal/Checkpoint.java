package org.gphash.journal;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

import org.gphash.EntryChunk;
import org.gphash.error.JournalDamagedException;
import org.gphash.error.PoolIoException;

/**
 * A checkpoint file: the index's entries as of a journal sequence number, in checksummed chunks,
 * closed by a trailer. It is written under a temporary name, forced, and renamed, so a file with a
 * checkpoint's name is complete; one that fails a check is damage, never a crash's leftover.
 *
 * <p>Layout (little-endian): a 64-byte header (magic, version, key and value size, the sequence
 * number replay starts at, the journal's identity, CRC-32C); chunks of a 24-byte header (magic,
 * count, index, CRC-32C over header and body) and a body of count keys then count values; a 48-byte
 * trailer (magic, entries, the sequence number the journal was flushed to before the checkpoint was
 * named, chunks, CRC-32C). A checkpoint of {@link #VERSION_LENGTHS} (an engine whose values have any
 * length) has each chunk's keys followed by each value's length (4 bytes) and the values packed at
 * their lengths, the chunk header's last word holding the values' bytes (0 in version 1).
 */
final class Checkpoint {

    static final long MAGIC = 0x3154504B43485047L;   // "GPHCKPT1"
    /** Every value of the value size. */
    static final int VERSION = 1;
    /** Each value's length kept, the values packed. */
    static final int VERSION_LENGTHS = 2;
    static final int HEADER = 64;
    static final int CHUNK_MAGIC = 0x4B484343;         // "CCHK"
    static final int CHUNK_HEADER = 24;
    static final int TRAILER_MAGIC = 0x444E4543;       // "CEND"
    static final int TRAILER = 48;

    private Checkpoint() {
    }

    /** Writes a checkpoint's chunks to a temporary file and names it once it is complete and forced. */
    static final class Writer implements AutoCloseable {
        private final Path target;
        private final Path tmp;
        private final FileChannel ch;
        private final ByteBuffer chunkHeader = RecordFormat.little(CHUNK_HEADER);
        private final boolean lengths;
        private final int valueSize;
        /** Lengths and packed values of a chunk, where lengths are kept. */
        private ByteBuffer packedLengths;
        private ByteBuffer packedValues;
        private long entries;
        private long chunks;
        private boolean done;
        private long unforced;
        private static final long FORCE_EVERY = 32L << 20;

        Writer(Path dir, long startSeq, int keySize, int valueSize, boolean lengths, long journalId) {
            this.lengths = lengths;
            this.valueSize = valueSize;
            this.target = JournalFiles.checkpoint(dir, startSeq);
            this.tmp = target.resolveSibling(target.getFileName() + JournalFiles.TEMP_SUFFIX);
            try {
                Files.deleteIfExists(tmp);
                ch = JournalFiles.createNew(tmp);
                ByteBuffer h = RecordFormat.little(HEADER);
                h.putLong(0, MAGIC).putInt(8, lengths ? VERSION_LENGTHS : VERSION).putInt(12, keySize).putInt(16, valueSize).putLong(24, startSeq)
                        .putLong(32, journalId);
                h.putInt(60, Crc.of(h, 0, 60));
                write(h);
            } catch (IOException e) {
                throw new PoolIoException("cannot start checkpoint " + tmp + ": " + e.getMessage(), e);
            }
        }

        /** Appends the chunk's entries: their keys, (their lengths,) and their values. */
        void chunk(EntryChunk chunk) {
            int count = chunk.size();
            if (count == 0) {
                return;
            }
            ByteBuffer k = chunk.keys().asByteBuffer();
            ByteBuffer l = null;
            ByteBuffer v;
            int valueBytes = 0;
            if (lengths) {
                pack(chunk);
                l = packedLengths.flip();
                v = packedValues.flip();
                valueBytes = v.remaining();
            } else {
                v = chunk.values().asByteBuffer();
            }
            chunkHeader.putInt(0, CHUNK_MAGIC).putInt(4, count).putLong(8, chunks);
            CRC32C crc = new CRC32C();
            crc.update(chunkHeader.duplicate().clear().limit(16));
            crc.update(k.duplicate());
            if (l != null) {
                crc.update(l.duplicate());
            }
            crc.update(v.duplicate());
            chunkHeader.putInt(16, (int) crc.getValue()).putInt(20, valueBytes);
            try {
                write(chunkHeader.clear());
                write(k);
                if (l != null) {
                    write(l);
                }
                write(v);
                unforced += CHUNK_HEADER + k.capacity() + (l == null ? 0 : l.limit()) + v.limit();
                if (unforced >= FORCE_EVERY) {
                    // Forced in pieces: gigabytes left dirty until the end would be written back all
                    // at once, and the journal's flushes would queue behind them (writers stall).
                    ch.force(false);
                    unforced = 0;
                }
            } catch (IOException e) {
                throw new PoolIoException("cannot write checkpoint " + tmp + ": " + e.getMessage(), e);
            }
            entries += count;
            chunks++;
        }

        long entries() {
            return entries;
        }

        /** Each entry's length, and its value's bytes back to back, into the packing buffers. */
        private void pack(EntryChunk chunk) {
            int count = chunk.size();
            if (packedLengths == null || packedLengths.capacity() < 4 * count) {
                packedLengths = RecordFormat.little(4 * chunk.capacity());
                packedValues = RecordFormat.little(chunk.capacity() * valueSize);
            }
            packedLengths.clear();
            packedValues.clear();
            MemorySegment values = chunk.values();
            MemorySegment out = MemorySegment.ofBuffer(packedValues);
            int at = 0;
            for (int i = 0; i < count; i++) {
                int length = chunk.valueLength(i);
                packedLengths.putInt(length);
                MemorySegment.copy(values, (long) i * valueSize, out, at, length);
                at += length;
            }
            packedValues.position(at);
        }

        /** Writes the trailer, forces the file and gives it its name; the directory is forced after. */
        Path finish(long endSeq) {
            ByteBuffer t = RecordFormat.little(TRAILER);
            t.putInt(0, TRAILER_MAGIC).putLong(8, entries).putLong(16, endSeq).putLong(24, chunks);
            t.putInt(40, Crc.of(t, 0, 40));
            try {
                write(t);
                ch.force(true);
                ch.close();
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
                JournalFiles.fsyncDirectory(target.getParent());
                done = true;
                return target;
            } catch (IOException e) {
                throw new PoolIoException("cannot complete checkpoint " + target + ": " + e.getMessage(), e);
            }
        }

        private void write(ByteBuffer b) throws IOException {
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }

        /** Abandons an unfinished checkpoint: its temporary file goes. */
        @Override
        public void close() {
            if (done) {
                return;
            }
            try {
                ch.close();
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the next open removes temporaries
            }
        }
    }

    /** What a checkpoint's header and trailer say. */
    record Summary(Path file, long startSeq, long endSeq, long entries) {
    }

    /** Checks a checkpoint's header against this journal; returns it (sequence number at 24, version at 8). */
    private static ByteBuffer checkHeader(FileChannel ch, Path file, int keySize, int valueSize, long journalId) throws IOException {
        ByteBuffer h = RecordFormat.little(HEADER);
        JournalFiles.readFully(ch, h, 0);
        String bad = h.getLong(0) != MAGIC ? "not a gphash checkpoint"
                : h.getInt(60) != Crc.of(h, 0, 60) ? "header checksum mismatch"
                : h.getInt(8) != VERSION && h.getInt(8) != VERSION_LENGTHS ? "unsupported checkpoint version " + h.getInt(8)
                : h.getInt(12) != keySize || h.getInt(16) != valueSize ? "key/value size " + h.getInt(12) + "/"
                        + h.getInt(16) + ", the index has " + keySize + "/" + valueSize
                : h.getLong(32) != journalId ? "checkpoint belongs to another journal" : null;
        if (bad != null) {
            throw new JournalDamagedException(file, 0, bad);
        }
        return h;
    }

    /** Refuses a chunk (its checksum whole) whose lengths are over the value size or do not add up to its values' bytes. */
    private static void checkLengths(Path file, long at, long chunk, MemorySegment lengths, int count, int valueSize,
                                     int valueBytes) {
        long sum = 0;
        for (int i = 0; i < count; i++) {
            int length = lengths.get(ValueLayout.JAVA_INT_UNALIGNED, 4L * i);
            if (length < 0 || length > valueSize) {
                throw new JournalDamagedException(file, at, "chunk " + chunk + " holds a value of " + length
                        + " bytes, over the value size " + valueSize);
            }
            sum += length;
        }
        if (sum != valueBytes) {
            throw new JournalDamagedException(file, at, "chunk " + chunk + "'s lengths add up to " + sum
                    + " bytes, its header says " + valueBytes);
        }
    }

    /**
     * The entries a checkpoint's trailer counts, from its header and trailer alone (both checked): to
     * size a pool before the whole file is read and checked by {@link #read}.
     */
    static long entries(Path file, int keySize, int valueSize, long journalId) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < HEADER + TRAILER) {
                throw new JournalDamagedException(file, 0, "checkpoint is " + size + " bytes, too short to be whole");
            }
            checkHeader(ch, file, keySize, valueSize, journalId);
            ByteBuffer t = RecordFormat.little(TRAILER);
            JournalFiles.readFully(ch, t, size - TRAILER);
            if (t.getInt(0) != TRAILER_MAGIC || t.getInt(40) != Crc.of(t, 0, 40) || t.getInt(44) != 0) {
                throw new JournalDamagedException(file, size - TRAILER, "checkpoint trailer is damaged or missing");
            }
            return t.getLong(8);
        } catch (IOException e) {
            throw new PoolIoException("cannot read checkpoint " + file + ": " + e.getMessage(), e);
        }
    }

    /** Takes a chunk: its keys, each value's length (null in a checkpoint whose values all have the value size), and its values back to back. */
    @FunctionalInterface
    interface ChunkConsumer {
        void accept(int count, MemorySegment keys, MemorySegment lengths, MemorySegment values);
    }

    /**
     * Reads and checks a whole checkpoint, giving each chunk to {@code consumer} (null: check only).
     * Refuses anything that fails a check, naming the file and the offset.
     */
    static Summary read(Path file, int keySize, int valueSize, long journalId, ChunkConsumer consumer) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < HEADER + TRAILER) {
                throw new JournalDamagedException(file, 0, "checkpoint is " + size + " bytes, too short to be whole");
            }
            ByteBuffer header = checkHeader(ch, file, keySize, valueSize, journalId);
            long startSeq = header.getLong(24);
            boolean lengths = header.getInt(8) == VERSION_LENGTHS;
            if (startSeq != JournalFiles.seqOf(file, true)) {
                throw new JournalDamagedException(file, 24, "header says sequence number " + startSeq + ", its name "
                        + JournalFiles.seqOf(file, true));
            }
            int entrySize = keySize + valueSize + (lengths ? 4 : 0);
            int maxChunk = Math.max(1, (16 << 20) / entrySize);
            ByteBuffer body = RecordFormat.little((int) Math.min(Integer.MAX_VALUE - 8, (long) maxChunk * entrySize));
            ByteBuffer ch24 = RecordFormat.little(CHUNK_HEADER);
            long at = HEADER;
            long entries = 0;
            long chunks = 0;
            while (true) {
                if (size - at < CHUNK_HEADER) {
                    throw new JournalDamagedException(file, at, "checkpoint ends without its trailer");
                }
                ch24.clear();
                JournalFiles.readFully(ch, ch24, at);
                int magic = ch24.getInt(0);
                if (magic == TRAILER_MAGIC) {
                    if (size - at != TRAILER) {
                        throw new JournalDamagedException(file, at, "trailer is followed by " + (size - at - TRAILER) + " bytes");
                    }
                    ByteBuffer t = RecordFormat.little(TRAILER);
                    JournalFiles.readFully(ch, t, at);
                    if (t.getInt(40) != Crc.of(t, 0, 40) || t.getInt(44) != 0) {
                        throw new JournalDamagedException(file, at, "trailer checksum mismatch");
                    }
                    if (t.getLong(8) != entries || t.getLong(24) != chunks) {
                        throw new JournalDamagedException(file, at, "trailer counts " + t.getLong(8) + " entries in "
                                + t.getLong(24) + " chunks, the file holds " + entries + " in " + chunks);
                    }
                    return new Summary(file, startSeq, t.getLong(16), entries);
                }
                int count = ch24.getInt(4);
                int valueBytes = ch24.getInt(20);
                if (magic != CHUNK_MAGIC || count < 1 || count > maxChunk || ch24.getLong(8) != chunks
                        || (lengths ? valueBytes < 0 || valueBytes > (long) count * valueSize : valueBytes != 0)) {
                    throw new JournalDamagedException(file, at, "chunk " + chunks + " has a damaged header");
                }
                int len = lengths ? count * (keySize + 4) + valueBytes : count * entrySize;
                if (size - at - CHUNK_HEADER < len) {
                    throw new JournalDamagedException(file, at, "chunk " + chunks + " is cut short");
                }
                body.clear().limit(len);
                JournalFiles.readFully(ch, body, at + CHUNK_HEADER);
                CRC32C crc = new CRC32C();
                crc.update(ch24.duplicate().clear().limit(16));
                crc.update(body.duplicate().flip());
                if ((int) crc.getValue() != ch24.getInt(16)) {
                    throw new JournalDamagedException(file, at, "chunk " + chunks + " (entries " + entries + " to "
                            + (entries + count - 1) + ") fails its checksum");
                }
                MemorySegment all = MemorySegment.ofBuffer(body.duplicate().clear());
                long keyBytes = (long) count * keySize;
                MemorySegment lengthColumn = lengths ? all.asSlice(keyBytes, 4L * count) : null;
                if (lengthColumn != null) {
                    checkLengths(file, at, chunks, lengthColumn, count, valueSize, valueBytes);
                }
                if (consumer != null) {
                    long valuesAt = keyBytes + (lengths ? 4L * count : 0);
                    consumer.accept(count, all.asSlice(0, keyBytes), lengthColumn, all.asSlice(valuesAt, len - valuesAt));
                }
                entries += count;
                chunks++;
                at += CHUNK_HEADER + len;
            }
        } catch (IOException e) {
            throw new PoolIoException("cannot read checkpoint " + file + ": " + e.getMessage(), e);
        }
    }
}
