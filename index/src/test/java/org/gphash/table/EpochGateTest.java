package org.gphash.table;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;


/**
 * Epoch-based reclamation: a retired block comes back only once no operation that might read it runs,
 * in the order blocks were retired, and a long operation's retirements (a large batch's) neither leak
 * nor come back early.
 */
class EpochGateTest {

    @Test
    void blocksComeBackOnlyAfterEveryOperationThatMightReadThemEnded() throws Exception {
        List<Long> freed = new ArrayList<>();
        EpochGate gate = new EpochGate(o -> {
            synchronized (freed) {
                freed.add(o);
            }
        });
        CountDownLatch readerMayLeave = new CountDownLatch(1);
        Thread reader = readerInside(gate, readerMayLeave);
        // One long operation (as a batch is) retires 10,000 blocks while another thread reads.
        EpochGate.Participant w = gate.enter();
        for (long b = 1; b <= 10_000; b++) {
            gate.retire(w, b);
        }
        gate.exit(w);
        assertEquals(10_000, gate.pendingReclamation());
        synchronized (freed) {
            assertTrue(freed.isEmpty(), "freed while the reader that might read them ran: " + freed.size());
        }
        readerMayLeave.countDown();
        reader.join();
        // Later operations move the epoch on and reclaim, in retirement order, each block once.
        for (long b = 10_001; b <= 10_640; b++) {
            EpochGate.Participant p = gate.enter();
            gate.retire(p, b);
            gate.exit(p);
        }
        synchronized (freed) {
            assertTrue(freed.size() >= 10_000, "the batch's blocks came back: " + freed.size());
            for (int i = 0; i < freed.size(); i++) {
                assertEquals(i + 1L, freed.get(i), "reclaimed in retirement order, each once");
            }
            assertEquals(10_640 - freed.size(), gate.pendingReclamation());
        }
    }

    /**
     * An exclusive phase asked for only where still needed when its turn comes: one no longer needed
     * returns at once, without waiting for the operations in progress (a growth whose room another
     * thread's drain made); one still needed waits for them and runs.
     */
    @Test
    void anExclusivePhaseNoLongerNeededDrainsNothing() throws Exception {
        EpochGate gate = new EpochGate(o -> { });
        CountDownLatch readerMayLeave = new CountDownLatch(1);
        Thread reader = readerInside(gate, readerMayLeave);
        AtomicBoolean ran = new AtomicBoolean();
        assertFalse(gate.runExclusiveIf(() -> false, () -> ran.set(true)), "not needed: not run");
        assertFalse(ran.get());
        CountDownLatch done = new CountDownLatch(1);
        Thread exclusive = Thread.ofPlatform().start(() -> {
            gate.runExclusiveIf(() -> true, () -> ran.set(true));
            done.countDown();
        });
        assertFalse(done.await(200, TimeUnit.MILLISECONDS), "needed: it waits for the operation in progress");
        readerMayLeave.countDown();
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertTrue(ran.get());
        reader.join();
        exclusive.join();
    }

    /** A thread inside an operation on {@code gate} (once this returns) until {@code mayLeave} opens. */
    private static Thread readerInside(EpochGate gate, CountDownLatch mayLeave) throws InterruptedException {
        CountDownLatch in = new CountDownLatch(1);
        Thread reader = Thread.ofPlatform().start(() -> {
            EpochGate.Participant r = gate.enter();
            in.countDown();
            try {
                mayLeave.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            gate.exit(r);
        });
        in.await();
        return reader;
    }
}
