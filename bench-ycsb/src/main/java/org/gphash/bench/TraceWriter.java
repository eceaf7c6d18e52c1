package org.gphash.bench;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes a trace ({@link TraceFormat}) batch by batch; {@link #close()} writes the end marker. */
public final class TraceWriter implements AutoCloseable {

    private final DataOutputStream out;
    private final TraceFormat.Header header;
    private long operations;
    private long batches;
    private boolean closed;

    public TraceWriter(Path file, TraceFormat.Header header) throws IOException {
        this(Files.newOutputStream(file), header);
    }

    public TraceWriter(OutputStream stream, TraceFormat.Header header) throws IOException {
        if (header.keySize() < 1 || header.keySize() > TraceFormat.MAX_KEY_SIZE
                || header.valueSize() < 1 || header.valueSize() > TraceFormat.MAX_VALUE_SIZE) {
            throw new IllegalArgumentException("key size must be 1.." + TraceFormat.MAX_KEY_SIZE + " and value size 1.."
                    + TraceFormat.MAX_VALUE_SIZE + ", got " + header.keySize() + " and " + header.valueSize());
        }
        this.out = new DataOutputStream(new BufferedOutputStream(stream, 1 << 16));
        this.header = header;
        byte[] description = header.description().getBytes(StandardCharsets.UTF_8);
        if (description.length > TraceFormat.MAX_DESCRIPTION) {
            throw new IllegalArgumentException("description longer than " + TraceFormat.MAX_DESCRIPTION + " bytes");
        }
        out.write(TraceFormat.MAGIC);
        writeShort(header.lengths() ? TraceFormat.VERSION_LENGTHS : TraceFormat.VERSION);
        writeShort(header.keySize());
        writeInt(header.valueSize());
        writeInt(description.length);
        out.write(description);
    }

    /** Appends {@code batch} (skipped if empty: 0 would end the trace). */
    public void write(OpBatch batch) throws IOException {
        if (batch.keySize() != header.keySize() || batch.valueSize() != header.valueSize()) {
            throw new IllegalArgumentException("batch sizes differ from the trace's");
        }
        int n = batch.size();
        if (n == 0) {
            return;
        }
        if (n > TraceFormat.MAX_BATCH) {
            throw new IllegalArgumentException("a trace batch holds at most " + TraceFormat.MAX_BATCH + " operations");
        }
        writeInt(n);
        int ks = header.keySize();
        int vs = header.valueSize();
        byte[] key = new byte[ks];
        byte[] value = new byte[vs];
        for (int i = 0; i < n; i++) {
            out.writeByte(batch.kind(i).ordinal());
            batch.key(i, key);
            out.write(key, 0, ks);
            if (batch.kind(i).hasValue()) {
                batch.value(i, value);
                int length = batch.valueLength(i);
                if (header.lengths()) {
                    writeInt(length);
                } else if (length != vs) {
                    throw new IllegalArgumentException("a value of " + length + " bytes in a trace of " + vs + "-byte values");
                }
                out.write(value, 0, length);
            }
        }
        operations += n;
        batches++;
    }

    public long operations() {
        return operations;
    }

    public long batches() {
        return batches;
    }

    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            writeInt(0);
            out.close();
        }
    }

    private void writeShort(int v) throws IOException {
        out.writeByte(v);
        out.writeByte(v >>> 8);
    }

    private void writeInt(int v) throws IOException {
        out.writeInt(Integer.reverseBytes(v));
    }
}
