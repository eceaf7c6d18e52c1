package org.gphash;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Run in a child JVM by {@link CoalescedKillTest}: opens the pool with coalescing on and runs
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

    static byte[] value(long key, int i) {
        return ModelProperties.value(key, i + 1L, VALUE);
    }

    public static void main(String[] args) throws Exception {
        Path pool = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        GPHashIndex index = GPHashIndex.builder(pool).coalescing(Coalescing.on(Duration.ZERO, 4096)).open();
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
