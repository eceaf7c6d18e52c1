package org.gphash.frontend;

import java.util.List;
import java.util.concurrent.atomic.LongAdder;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.spi.Engine;
import org.gphash.spi.SubmittedBatch;

/**
 * The coalescer's dispatcher thread: gathers the next engine batch from the queue
 * ({@link CoalescingQueue}), runs it on the engine, and has {@link CallerCompletions} hand each
 * caller its outcome and value. With two batches in flight
 * ({@link Coalescing#batchesInFlight}) it submits the next batch ({@link Engine#submit}) before it
 * completes the last one's callers; the engine runs submitted batches in order, and the dispatcher
 * completes them in order, so an asynchronous caller's results come in the order it issued its
 * operations.
 */
final class CoalescerDispatcher implements Runnable {

    /** A batch the dispatcher submitted: its requests, its engine batch and result, the engine's handle. */
    private static final class InFlight {
        final Batch batch;
        final BatchResult result;
        CoalescedRequest[] requests;
        SubmittedBatch submitted;
        /** What the engine threw for this batch (a RuntimeException or an Error), or null. */
        Throwable failure;

        InFlight(Batch batch, BatchResult result) {
            this.batch = batch;
            this.result = result;
        }
    }

    private final Engine engine;
    private final CoalescingQueue queue;
    private final CallerCompletions completions;
    private final InFlight[] slots;
    private final LongAdder batches = new LongAdder();
    private final LongAdder operations = new LongAdder();

    CoalescerDispatcher(Engine engine, CoalescingQueue queue, HostReadCache hostCache, int batchesInFlight) {
        this.engine = engine;
        this.queue = queue;
        int keySize = engine.geometry().keySize();
        int valueSize = engine.geometry().valueSize();
        this.completions = new CallerCompletions(valueSize, hostCache);
        this.slots = new InFlight[batchesInFlight];
        // Where values have lengths of their own, the merged result holds them packed too: in places of
        // the value size, a merged batch of 65,536 operations on a pool of values of up to 4 KiB had
        // 256 MiB of result, each value read copied into a 4 KiB place and the rest of it zeroed, and then
        // copied again into its caller's packed result (YCSB A through the GPU backend at batches of
        // 16384 ran at a tenth of the CPU backend's rate: docs/lab/2026-12-02-route-costs-and-the-jit.md).
        boolean packed = engine.valueLengths();
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new InFlight(Batch.create(keySize, valueSize, 1024, packed),
                    BatchResult.create(valueSize, 1024, packed));
        }
    }

    /** {@return engine batches run so far} */
    long batches() {
        return batches.sum();
    }

    /** {@return operations run in them} */
    long operations() {
        return operations.sum();
    }

    @Override
    public void run() {
        int slot = 0;
        InFlight pending = null;  // submitted, callers not yet completed (only with two in flight)
        for (;;) {
            List<CoalescedRequest> taken;
            try {
                taken = queue.gather(pending != null);
            } catch (InterruptedException e) {
                finish(pending);
                return;
            }
            if (taken == null) {
                // Nothing came while the last batch ran: complete it, whose callers will be back.
                finish(pending);
                pending = null;
                continue;
            }
            boolean stop = queue.stopRequested();
            long start = System.nanoTime();
            InFlight current = slots[slot];
            slot = (slot + 1) % slots.length;
            submit(taken, current);
            finish(pending);
            pending = null;
            if (current.submitted == SubmittedBatch.DONE || current.requests == null) {
                finish(current);
            } else {
                pending = current;
            }
            queue.ran(System.nanoTime() - start, taken.size());
            if (stop) {
                finish(pending);
                return;
            }
        }
    }

    /** Builds the engine batch of {@code taken} in {@code f} and submits it (requests null: nothing taken). */
    private void submit(List<CoalescedRequest> taken, InFlight f) {
        f.requests = null;
        f.submitted = null;
        f.failure = null;
        if (taken.isEmpty()) {
            return;
        }
        f.requests = taken.toArray(new CoalescedRequest[0]);
        Batch batch = f.batch;
        batch.clear();
        // A request the engine batch refuses fails the callers of this batch: thrown out of here, it
        // ended the dispatcher's thread and every caller, then and later, waited for ever.
        try {
            for (CoalescedRequest r : f.requests) {
                if (r.batch != null) {
                    batch.addAll(r.batch);
                } else {
                    batch.add(r.kind, r.key, r.value);
                }
            }
            f.result.reset(batch.size());
            if (slots.length == 1) {
                engine.execute(batch, f.result);  // awaited at once anyway: no handle to make
                f.submitted = SubmittedBatch.DONE;
            } else {
                f.submitted = engine.submit(batch, f.result);
            }
        } catch (RuntimeException | Error e) {
            f.failure = e;
        }
    }

    /** Waits for a submitted batch (null: none) and hands each of its callers its outcome and value. */
    private void finish(InFlight f) {
        if (f == null || f.requests == null) {
            return;
        }
        CoalescedRequest[] done = f.requests;
        f.requests = null;
        if (f.failure == null) {
            try {
                f.submitted.await();
            } catch (RuntimeException | Error e) {
                f.failure = e;
            }
        }
        if (f.failure != null) {
            for (CoalescedRequest r : done) {
                r.completeExceptionally(f.failure);
            }
            return;
        }
        batches.increment();
        operations.add(f.batch.size());
        completions.deliver(done, f.result);
    }
}
