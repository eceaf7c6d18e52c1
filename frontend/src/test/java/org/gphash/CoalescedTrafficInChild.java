package org.gphash;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Run in a child JVM by {@link CoalescedKillTest}: opens the pool (on the backend named by the
 * third argument, CPU by default) with coalescing on and runs
 * {@code threads} callers, each on keys of its own, through synchronous calls, async calls and
 * batches, printing {@code ACK t i} once its operation {@code i} has returned. The parent kills it
 * with SIGKILL. Every thread's operations are a function of its number ({@link #op}).
 */
public final class CoalescedTrafficInChild {

    static final int VALUE = 32;
    static final int KEYS_PER_THREAD = 50;

    private CoalescedTrafficInChild() {
    }

    /** Operation {@code i} of thread {@code t}: kind (0 put, 1 putAsync, 2 put in a batch, 3 delete) and key. */
    record Op(int kind, long key) {
    }

    static List<Op> ops(int t, int n) {
        SplittableRandom r = new SplittableRandom(t * 7919L + 1);
        List<Op> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new Op(r.nextInt(4), t * 1000L + r.nextInt(KEYS_PER_THREAD)));
        }
        return out;
    }

    /** The value operation {@code i} writes to {@code key}: both numbers, little-endian, then a pattern of them. */
    static byte[] value(long key, int i) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(VALUE).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putLong(key).putLong(i + 1L);
        while (b.hasRemaining()) {
            b.put((byte) (key * 31 + i + b.position()));
        }
        return b.array();
    }

    public static void main(String[] args) throws Exception {
        Path pool = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        Backend backend = args.length > 2 ? Backend.valueOf(args[2]) : Backend.CPU;
        GPHashIndex index = GPHashIndex.builder(pool).backend(backend).coalescing(Coalescing.on(Duration.ZERO, 4096)).open();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ts.add(Thread.ofPlatform().start(() -> {
                List<Op> ops = ops(id, 1_000_000);
                for (int i = 0; i < ops.size(); i++) {
                    Op op = ops.get(i);
                    byte[] v = value(op.key(), i);
                    switch (op.kind()) {
                        case 0 -> index.put(op.key(), v);
                        case 1 -> index.putAsync(op.key(), v).join();
                        case 2 -> index.execute(index.newBatch(2).get(op.key()).put(op.key(), v));
                        default -> index.delete(op.key());
                    }
                    synchronized (System.out) {
                        System.out.println("ACK " + id + " " + i);
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
