package org.gphash.crashtest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntUnaryOperator;
import java.util.zip.CRC32C;

/**
 * The worker's acknowledgement log: one fixed-size record per operation, appended after the engine
 * returned and forced to storage before the next operation starts, so an operation counts as
 * acknowledged exactly when its record is durable. A record killed half-written fails its CRC32C
 * and it and everything after it are ignored.
 *
 * <pre>
 *   0 seq (8)  8 key (8)  16 kind (1)  17 outcome ordinal (1)  18 zero (10)  28 CRC32C of [0, 28) (4)
 * </pre>
 */
final class AckLog implements AutoCloseable {

    static final int RECORD = 32;

    /** One acknowledged operation. */
    record Ack(long seq, long key, Workload.Kind kind, int outcome) {
    }

    private final FileChannel channel;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(RECORD).order(ByteOrder.LITTLE_ENDIAN);
    private final byte[] scratch = new byte[RECORD];
    private long position;

    private AckLog(FileChannel channel) {
        this.channel = channel;
    }

    static AckLog create(Path path) {
        try {
            return new AckLog(FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create ack log " + path, e);
        }
    }

    /** Appends the records of a batch and forces them once; returns once they are durable. */
    void appendAll(long[] seqs, Workload.Op[] ops, IntUnaryOperator outcome) throws IOException {
        for (int i = 0; i < seqs.length; i++) {
            write(seqs[i], ops[i].key(), ops[i].kind(), outcome.applyAsInt(i));
        }
        channel.force(false);
    }

    /** Appends and forces one record; returns once it is durable. */
    void append(long seq, long key, Workload.Kind kind, int outcome) throws IOException {
        write(seq, key, kind, outcome);
        channel.force(false);
    }

    private void write(long seq, long key, Workload.Kind kind, int outcome) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(scratch).order(ByteOrder.LITTLE_ENDIAN);
        Arrays.fill(scratch, (byte) 0);
        b.putLong(0, seq).putLong(8, key).put(16, (byte) kind.ordinal()).put(17, (byte) outcome);
        CRC32C crc = new CRC32C();
        crc.update(scratch, 0, 28);
        b.putInt(28, (int) crc.getValue());
        buf.clear();
        buf.put(scratch).flip();
        while (buf.hasRemaining()) {
            position += channel.write(buf, position);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    /** Reads the valid prefix of a log: records up to the first torn one or a gap in sequence. */
    static List<Ack> read(Path path, long firstSeq) throws IOException {
        List<Ack> out = new ArrayList<>();
        if (!Files.exists(path)) {
            return out;
        }
        byte[] all = Files.readAllBytes(path);
        ByteBuffer b = ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN);
        long expect = firstSeq;
        for (int at = 0; at + RECORD <= all.length; at += RECORD) {
            CRC32C crc = new CRC32C();
            crc.update(all, at, 28);
            if (b.getInt(at + 28) != (int) crc.getValue() || b.getLong(at) != expect) {
                break;
            }
            out.add(new Ack(expect, b.getLong(at + 8), Workload.Kind.values()[all[at + 16]], all[at + 17]));
            expect++;
        }
        return out;
    }
}
