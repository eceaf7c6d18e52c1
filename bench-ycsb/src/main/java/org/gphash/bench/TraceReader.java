package org.gphash.bench;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.gphash.OpKind;

/**
 * Reads a trace ({@link TraceFormat}) batch by batch, checking everything it reads: a file that is
 * not a trace, of another version, with impossible sizes, an unknown operation kind or cut short
 * is refused with a {@link TraceFormatException} that names the file, the byte offset and what
 * was wrong.
 */
public final class TraceReader implements AutoCloseable {

    private final String name;
    private final DataInputStream in;
    private final TraceFormat.Header header;
    private long offset;
    private boolean ended;

    public TraceReader(Path file) throws IOException {
        this(file.toString(), Files.newInputStream(file));
    }

    public TraceReader(String name, InputStream stream) throws IOException {
        this.name = name;
        this.in = new DataInputStream(new BufferedInputStream(stream, 1 << 16));
        byte[] magic = new byte[TraceFormat.MAGIC.length];
        readFully(magic, "the header");
        if (!Arrays.equals(magic, TraceFormat.MAGIC)) {
            throw error(0, "not a gphash trace (the file does not start with \"GPHTRACE\")");
        }
        int version = readShort("the header");
        if (version != TraceFormat.VERSION && version != TraceFormat.VERSION_LENGTHS) {
            throw error(8, "trace format version " + version + ", this build reads versions " + TraceFormat.VERSION
                    + " and " + TraceFormat.VERSION_LENGTHS);
        }
        int keySize = readShort("the header");
        int valueSize = readInt("the header");
        if (keySize < 1 || keySize > TraceFormat.MAX_KEY_SIZE) {
            throw error(10, "key size " + keySize + " is outside 1.." + TraceFormat.MAX_KEY_SIZE);
        }
        if (valueSize < 1 || valueSize > TraceFormat.MAX_VALUE_SIZE) {
            throw error(12, "value size " + Integer.toUnsignedString(valueSize) + " is outside 1.."
                    + TraceFormat.MAX_VALUE_SIZE);
        }
        int length = readInt("the header");
        if (length < 0 || length > TraceFormat.MAX_DESCRIPTION) {
            throw error(16, "description length " + Integer.toUnsignedString(length) + " is over "
                    + TraceFormat.MAX_DESCRIPTION);
        }
        byte[] description = new byte[length];
        readFully(description, "the description");
        this.header = new TraceFormat.Header(keySize, valueSize, new String(description, StandardCharsets.UTF_8),
                version == TraceFormat.VERSION_LENGTHS);
    }

    public TraceFormat.Header header() {
        return header;
    }

    /**
     * Reads the next batch into {@code batch} (cleared first, grown as needed); false at the end
     * marker.
     */
    public boolean next(OpBatch batch) throws IOException {
        batch.clear();
        if (ended) {
            return false;
        }
        long at = offset;
        int n = readInt("a batch header (the trace has no end marker: cut short?)");
        if (n == 0) {
            ended = true;
            return false;
        }
        if (n < 0 || n > TraceFormat.MAX_BATCH) {
            throw error(at, "batch of " + Integer.toUnsignedString(n) + " operations (at most " + TraceFormat.MAX_BATCH + ")");
        }
        int ks = header.keySize();
        int vs = header.valueSize();
        byte[] key = new byte[ks];
        byte[] value = new byte[vs];
        OpKind[] kinds = OpKind.values();
        for (int i = 0; i < n; i++) {
            long opAt = offset;
            int k = in.read();
            if (k < 0) {
                throw error(opAt, "trace cut short inside a batch (operation " + i + " of " + n + ")");
            }
            offset++;
            if (k >= kinds.length) {
                throw error(opAt, "unknown operation kind " + k + " (0.." + (kinds.length - 1) + ")");
            }
            OpKind kind = kinds[k];
            readFully(key, "a key");
            int length = vs;
            if (kind.hasValue()) {
                if (header.lengths()) {
                    long lengthAt = offset;
                    length = readInt("a value's length");
                    if (length < 0 || length > vs) {
                        throw error(lengthAt, "a value of " + Integer.toUnsignedString(length) + " bytes, over the value size " + vs);
                    }
                }
                readFully(value, 0, length, "a value");
            }
            batch.addRaw(kind, key, 0, value, 0, length);
        }
        return true;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    private void readFully(byte[] b, String what) throws IOException {
        readFully(b, 0, b.length, what);
    }

    private void readFully(byte[] b, int from, int length, String what) throws IOException {
        try {
            in.readFully(b, from, length);
        } catch (EOFException e) {
            throw error(offset, "trace cut short in " + what);
        }
        offset += length;
    }

    private int readShort(String what) throws IOException {
        byte[] b = new byte[2];
        readFully(b, what);
        return (b[0] & 0xFF) | (b[1] & 0xFF) << 8;
    }

    private int readInt(String what) throws IOException {
        byte[] b = new byte[4];
        readFully(b, what);
        return (b[0] & 0xFF) | (b[1] & 0xFF) << 8 | (b[2] & 0xFF) << 16 | (b[3] & 0xFF) << 24;
    }

    private TraceFormatException error(long at, String message) {
        return new TraceFormatException(name + ": byte " + at + ": " + message);
    }
}
