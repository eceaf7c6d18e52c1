package org.gphash.recovery;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

import org.gphash.Geometry;

/**
 * The stream {@code dump} writes and {@code import} reads, big-endian:
 * <pre>
 *   magic "GPHDUMP1" (8), version (4), key size, value size, levels, hashes, slots per bucket (4 each)
 *   per item: tag 1 (1), key (key size), value (value size)
 *         or: tag 2 (1), key (key size), value length n (4), value (n bytes): a value shorter than the
 *             value size, which format 3 pools hold
 *   end:      tag 0 (1), item count (8), CRC32C of every byte before the CRC (4)
 * </pre>
 * The trailer makes a truncated or damaged dump detectable: import refuses it rather than build a
 * pool that silently lacks items. The geometry travels so that the imported pool has the same shape.
 */
final class DumpFormat {

    static final long MAGIC = 0x47504844554D5031L; // "GPHDUMP1"
    static final int VERSION = 1;
    static final int HEADER_BYTES = 8 + 4 * 6;
    static final int TRAILER_BYTES = 1 + 8 + 4;

    private DumpFormat() {
    }

    /** Writes a dump; call {@link #item} per item, then {@link #finish}. */
    static final class Writer {
        private final CheckedOutputStream checked;
        private final DataOutputStream out;
        private long count;

        private final int valueSize;

        Writer(OutputStream sink, Geometry g) throws IOException {
            this.valueSize = g.valueSize();
            this.checked = new CheckedOutputStream(sink, new CRC32C());
            this.out = new DataOutputStream(checked);
            out.writeLong(MAGIC);
            out.writeInt(VERSION);
            out.writeInt(g.keySize());
            out.writeInt(g.valueSize());
            out.writeInt(g.levels());
            out.writeInt(g.hashes());
            out.writeInt(g.slotsPerBucket());
        }

        void item(byte[] key, byte[] value) throws IOException {
            boolean whole = value.length == valueSize;
            out.writeByte(whole ? 1 : 2);
            out.write(key);
            if (!whole) {
                out.writeInt(value.length);
            }
            out.write(value);
            count++;
        }

        long finish() throws IOException {
            out.writeByte(0);
            out.writeLong(count);
            out.flush();
            int crc = (int) checked.getChecksum().getValue();
            out.writeInt(crc);
            out.flush();
            return count;
        }
    }

    /** Reads a dump: {@link #geometry()} first, then {@link #next} until it returns false. */
    static final class Reader {
        private final CheckedInputStream checked;
        private final DataInputStream in;
        private final Geometry geometry;
        private long count;

        Reader(InputStream source) throws IOException {
            this.checked = new CheckedInputStream(source, new CRC32C());
            this.in = new DataInputStream(checked);
            try {
                if (in.readLong() != MAGIC) {
                    throw new IOException("not a gphash dump (no GPHDUMP1 magic)");
                }
                int version = in.readInt();
                if (version != VERSION) {
                    throw new IOException("dump format version " + version + ", this build reads " + VERSION);
                }
                int k = in.readInt();
                int v = in.readInt();
                this.geometry = new Geometry(in.readInt(), in.readInt(), in.readInt(), k, v);
            } catch (EOFException e) {
                throw new IOException("dump is truncated inside its header", e);
            } catch (IllegalArgumentException e) {
                throw new IOException("dump header has an impossible geometry: " + e.getMessage(), e);
            }
        }

        Geometry geometry() {
            return geometry;
        }

        /**
         * Reads the next item into the arrays (a shorter value into the first bytes of {@code value});
         * {@return its value's length, or -1 at the (verified) end}
         */
        int next(byte[] key, byte[] value) throws IOException {
            try {
                int tag = in.readUnsignedByte();
                if (tag == 1 || tag == 2) {
                    in.readFully(key);
                    int length = tag == 1 ? value.length : in.readInt();
                    if (length < 0 || length > value.length) {
                        throw new IOException("dump is damaged: a value of " + length + " bytes after " + count + " items");
                    }
                    in.readFully(value, 0, length);
                    count++;
                    return length;
                }
                if (tag != 0) {
                    throw new IOException("dump is damaged: record tag " + tag + " after " + count + " items");
                }
                long expected = in.readLong();
                int computed = (int) checked.getChecksum().getValue();
                int stored = in.readInt();
                if (expected != count) {
                    throw new IOException("dump says " + expected + " items but holds " + count);
                }
                if (stored != computed) {
                    throw new IOException("dump checksum mismatch: the file is damaged");
                }
                return -1;
            } catch (EOFException e) {
                throw new IOException("dump is truncated after " + count + " items (no end marker)", e);
            }
        }
    }
}
