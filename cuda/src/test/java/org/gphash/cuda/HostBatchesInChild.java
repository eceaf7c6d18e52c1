package org.gphash.cuda;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.GPHashIndex;
import org.gphash.OpKind;

/**
 * Run in a child JVM by {@link HostBatchesKillTest}: opens the pool on the GPU backend and runs
 * {@code threads} threads, each writing every key of its own range in one host batch after another
 * (batch {@code b} writes version {@code b}; thread {@code t} starts after the version the fourth
 * argument lists for it), printing {@code ACK t b} once batch {@code b} of thread {@code t} has
 * returned. The parent kills it with SIGKILL. Batches are large enough for the
 * pipeline's route (several chunks each) and run side by side from the threads.
 */
public final class HostBatchesInChild {

    static final int VALUE = 128;

    private HostBatchesInChild() {
    }

    /** The first key of thread {@code t}'s range. */
    static long firstKey(int t, int keysPerThread) {
        return (long) t * keysPerThread * 2;
    }

    /** Writes key and version, then a pattern of both: a torn or misplaced value cannot pass {@link #versionOf}. */
    static void value(long key, long version, MemorySegment out, long at) {
        out.set(ValueLayout.JAVA_LONG_UNALIGNED, at, key);
        out.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 8, version);
        for (int i = 16; i < VALUE; i++) {
            out.set(ValueLayout.JAVA_BYTE, at + i, (byte) (key * 31 + version * 7 + i));
        }
    }

    /** The version {@code value} holds for {@code key}, or -1 if it is not a whole value of that key. */
    static long versionOf(long key, byte[] value) {
        MemorySegment v = MemorySegment.ofArray(value);
        if (v.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != key) {
            return -1;
        }
        long version = v.get(ValueLayout.JAVA_LONG_UNALIGNED, 8);
        for (int i = 16; i < VALUE; i++) {
            if (value[i] != (byte) (key * 31 + version * 7 + i)) {
                return -1;
            }
        }
        return version;
    }

    public static void main(String[] args) throws Exception {
        Path pool = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        int keys = Integer.parseInt(args[2]);
        long[] after = java.util.Arrays.stream(args[3].split(",")).mapToLong(Long::parseLong).toArray();
        GPHashIndex index = GPHashIndex.builder(pool).backend(Backend.GPU).open();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts.add(Thread.ofPlatform().start(() -> {
                Batch batch = index.newBatch(keys);
                long first = firstKey(id, keys);
                for (long b = after[id] + 1; ; b++) {
                    batch.clear();
                    batch.setSize(keys);
                    MemorySegment kinds = batch.kinds();
                    MemorySegment keyColumn = batch.keys();
                    MemorySegment values = batch.values();
                    for (int i = 0; i < keys; i++) {
                        kinds.set(ValueLayout.JAVA_BYTE, i, (byte) OpKind.PUT.ordinal());
                        keyColumn.set(ValueLayout.JAVA_LONG_UNALIGNED, (long) i * 8, first + i);
                        value(first + i, b, values, (long) i * VALUE);
                    }
                    index.execute(batch);
                    synchronized (System.out) {
                        System.out.println("ACK " + id + " " + b);
                        System.out.flush();
                    }
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
    }
}
