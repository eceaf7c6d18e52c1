package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The gate between the GPU engine's host reads and its lock holders, without a GPU (CI): while a
 * closer works (between {@link HostReadGate#close} and {@link HostReadGate#open}) no reader is
 * inside, readers that find it closed are refused rather than kept waiting, and readers get in
 * again once it is open.
 */
class HostReadGateTest {

    @Test
    @Timeout(60)
    void noReaderIsInsideWhileACloserWorks() throws Exception {
        HostReadGate gate = new HostReadGate();
        AtomicInteger inside = new AtomicInteger();
        AtomicBoolean closerWorking = new AtomicBoolean();
        AtomicLong overlaps = new AtomicLong();
        AtomicLong entered = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            readers.add(Thread.ofPlatform().start(() -> {
                while (!stop.get()) {
                    if (!gate.tryEnter()) {
                        refused.incrementAndGet();
                        Thread.onSpinWait();
                        continue;
                    }
                    inside.incrementAndGet();
                    if (closerWorking.get()) {
                        overlaps.incrementAndGet();
                    }
                    for (int i = 0; i < 50; i++) {
                        Thread.onSpinWait();  // a read's few microseconds
                    }
                    if (closerWorking.get()) {
                        overlaps.incrementAndGet();
                    }
                    inside.decrementAndGet();
                    entered.incrementAndGet();
                    gate.exit();
                }
            }));
        }
        for (int round = 0; round < 2_000; round++) {
            gate.close();
            closerWorking.set(true);
            assertEquals(0, inside.get(), "no reader inside once the gate is closed");
            for (int i = 0; i < 200; i++) {
                Thread.onSpinWait();  // a batch
            }
            closerWorking.set(false);
            gate.open();
            for (int i = 0; i < 200; i++) {
                Thread.onSpinWait();  // between batches
            }
        }
        stop.set(true);
        for (Thread t : readers) {
            t.join();
        }
        assertEquals(0, overlaps.get(), "readers inside while the closer worked");
        assertTrue(entered.get() > 100, "readers got in between batches: " + entered.get());
        assertTrue(refused.get() > 100, "readers that found the gate closed were refused, not kept: " + refused.get());
    }

    @Test
    void aClosedGateRefusesUntilOpened() {
        HostReadGate gate = new HostReadGate();
        assertTrue(gate.tryEnter());
        gate.exit();
        gate.close();
        assertTrue(!gate.tryEnter(), "closed: refused");
        gate.open();
        assertTrue(gate.tryEnter(), "open again: in");
        gate.exit();
    }
}
