package org.gphash.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * What one durable write costs on a file system, three ways (issue 28, docs/PERFORMANCE.md, "Single
 * calls on a disk"): an 8-byte store through a shared mapping then {@code msync} of its page (the
 * engine's persist), the same store then {@code fdatasync} of the file, and {@code pwrite} then
 * {@code fdatasync} (LMDB's commit). 2000 rounds each, on pages spread over a 16 MiB file.
 *
 * <pre>./gphash run org.gphash.bench.SyncCost [dir=/tmp]</pre>
 */
public final class SyncCost {

    private SyncCost() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : System.getProperty("java.io.tmpdir"));
        Path p = Files.createTempFile(dir, "gphash-sync-cost-", ".bin");
        int n = 2000;
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena arena = Arena.ofShared()) {
            ch.write(ByteBuffer.allocate(1 << 24), 0);
            ch.force(true);
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, 1 << 24, arena);
            for (int round = 0; round < 2; round++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    long off = page(i);
                    m.set(ValueLayout.JAVA_LONG, off, i);
                    m.asSlice(off, 8).force();
                }
                long t1 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    m.set(ValueLayout.JAVA_LONG, page(i), i);
                    ch.force(false);
                }
                long t2 = System.nanoTime();
                ByteBuffer eight = ByteBuffer.allocate(8);
                for (int i = 0; i < n; i++) {
                    ch.write(eight.clear(), page(i));
                    ch.force(false);
                }
                long t3 = System.nanoTime();
                System.out.printf(Locale.ROOT, "%s: store + msync %.1f us, store + fdatasync %.1f us, pwrite + fdatasync %.1f us%n",
                        dir, (t1 - t0) / 1e3 / n, (t2 - t1) / 1e3 / n, (t3 - t2) / 1e3 / n);
            }
        } finally {
            Files.deleteIfExists(p);
        }
    }

    private static long page(int i) {
        return (long) (i * 7919 % 4096) * 4096;
    }
}
