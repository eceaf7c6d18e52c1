package org.gphash.recovery;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import org.gphash.GPHashIndex;
import org.gphash.Geometry;
import org.gphash.format.SlotMeta;
import org.gphash.index.api.TestPools;
import org.gphash.table.PoolInspector;
import org.gphash.table.TableLayout;

/** Pools for the tool's tests (on tmpfs when there is one), a way to run the tool, and raw slot surgery. */
final class ToolFixture implements AutoCloseable {

    static final int VALUE_SIZE = 32;

    private final TestPools pools = TestPools.create();
    final Path dir = pools.dir();

    /** The tool's exit code and what it printed. */
    record Run(int code, String out, String err) {
        String all() {
            return out + err;
        }
    }

    static Run tool(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = RecoveryTool.run(args, new PrintWriter(out), new PrintWriter(err));
        return new Run(code, out.toString(), err.toString());
    }

    static byte[] value(long key) {
        byte[] v = new byte[VALUE_SIZE];
        for (int i = 0; i < v.length; i++) {
            v[i] = (byte) (key * 31 + i);
        }
        return v;
    }

    /** A cleanly closed pool holding keys 1..items, small enough to have resized. */
    Path pool(String name, int items) {
        Path p = dir.resolve(name);
        try (GPHashIndex index = GPHashIndex.builder(p).keySize(8).valueSize(VALUE_SIZE).initialCapacity(32).seed(7)
                .create()) {
            for (long k = 1; k <= items; k++) {
                index.put(k, value(k));
            }
        }
        return p;
    }

    /** One slot as found on the media. */
    record Slot(long offset, long meta, long key) {
    }

    /** Every slot of every level, items and empty ones. */
    static List<Slot> slots(Path pool) {
        List<Slot> out = new ArrayList<>();
        try (PoolInspector in = PoolInspector.open(pool)) {
            Geometry g = in.geometry();
            TableLayout t = in.layout();
            MemorySegment s = in.segment();
            for (int d = 0; d < t.levelCount(); d++) {
                for (long i = 0; i < t.bucketsAtDepth(d) * g.slotsPerBucket(); i++) {
                    long slot = t.levelOffset(d) + i * g.slotSize();
                    out.add(new Slot(slot, s.get(ValueLayout.JAVA_LONG, slot),
                            s.get(ValueLayout.JAVA_LONG_UNALIGNED, slot + SlotMeta.BYTES)));
                }
            }
        }
        return out;
    }

    static List<Slot> items(Path pool) {
        return slots(pool).stream().filter(s -> SlotMeta.isItem(s.meta())).toList();
    }

    static void writeLong(Path pool, long offset, long value) {
        try (FileChannel ch = FileChannel.open(pool, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, value), offset);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void writeByte(Path pool, long offset, byte value) {
        try (FileChannel ch = FileChannel.open(pool, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {value}), offset);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Clears the clean-shutdown flag in both header copies (checksums fixed): the pool reads as crashed while open. */
    static void markUncleanShutdown(Path pool) {
        try (FileChannel ch = FileChannel.open(pool, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            for (long base : new long[] {0, 2048}) {
                ByteBuffer copy = ByteBuffer.allocate(1792).order(ByteOrder.LITTLE_ENDIAN);
                ch.read(copy, base);
                copy.putInt(44, copy.getInt(44) & ~1);
                java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
                crc.update(copy.array(), 0, 1792);
                ch.write(ByteBuffer.wrap(copy.array()), base);
                ch.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, (int) crc.getValue()), base + 1792);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] bytes(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        pools.close();
    }
}
