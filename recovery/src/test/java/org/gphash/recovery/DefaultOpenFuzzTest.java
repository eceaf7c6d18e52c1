package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.gphash.GPHashIndex;
import org.gphash.error.GPHashException;
import org.gphash.format.SlotMeta;
import org.gphash.table.PoolInspector;
import org.gphash.table.TableLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, item 1: single-bit flips in the table of a cleanly closed pool, opened the default way
 * (the close record trusted, the fast open). Every case must end in one of three ways: open refuses
 * the pool, or it opens and serves every key right, or an operation that reaches the damage throws a
 * {@link GPHashException}; never a wrong or missing value without an error, never a raw JDK
 * exception, never a {@code close()} that fails with anything else. Half the flips land in the
 * meta word of an item (its state, fingerprint or value offset), where damage does the most harm.
 *
 * <p>Prints {@code default-open fuzz: variants=V refused=R correct=C detected=D servedWrong=W
 * rawExceptions=X} (the figures docs/RELIABILITY.md quotes).
 */
class DefaultOpenFuzzTest {

    private static final int ITEMS = 400;
    private static final int CASES = 160;
    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    enum Verdict { REFUSED, CORRECT, DETECTED, SERVED_WRONG, RAW_EXCEPTION }

    @Test
    void bucketBitFlipsAreRefusedOrDetectedNeverServed() throws Exception {
        Path pristinePath = f.pool("pristine.pool", ITEMS);
        byte[] pristine = Files.readAllBytes(pristinePath);
        List<long[]> levels = new ArrayList<>();
        List<Long> itemSlots = new ArrayList<>();
        int slotSize;
        try (PoolInspector in = PoolInspector.open(pristinePath)) {
            TableLayout t = in.layout();
            slotSize = in.geometry().slotSize();
            MemorySegment s = in.segment();
            for (int d = 0; d < t.levelCount(); d++) {
                long slots = t.bucketsAtDepth(d) * in.geometry().slotsPerBucket();
                levels.add(new long[] {t.levelOffset(d), slots});
                for (long i = 0; i < slots; i++) {
                    long slot = t.levelOffset(d) + i * slotSize;
                    if (SlotMeta.isItem(s.get(ValueLayout.JAVA_LONG, slot))) {
                        itemSlots.add(slot);
                    }
                }
            }
        }
        assertEquals(ITEMS, itemSlots.size());
        Random random = new Random(20261126);
        int[] counts = new int[Verdict.values().length];
        List<String> bad = new ArrayList<>();
        Path p = f.dir.resolve("case.pool");
        for (int c = 0; c < CASES; c++) {
            byte[] b = pristine.clone();
            long at;
            if (c % 2 == 0) {
                at = itemSlots.get(random.nextInt(itemSlots.size())) + random.nextInt(8);   // an item's meta word
            } else {
                long[] level = levels.get(random.nextInt(levels.size()));
                at = level[0] + (long) (random.nextDouble() * level[1] * slotSize);
            }
            int bit = random.nextInt(8);
            b[(int) at] ^= (byte) (1 << bit);
            Files.deleteIfExists(p);
            Files.write(p, b);
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
            String label = "case " + c + " (table byte " + at + " bit " + bit + ")";
            Verdict v = run(p, label, bad);
            counts[v.ordinal()]++;
        }
        System.out.println("default-open fuzz: variants=" + CASES + " refused=" + counts[0] + " correct=" + counts[1]
                + " detected=" + counts[2] + " servedWrong=" + counts[3] + " rawExceptions=" + counts[4]);
        assertTrue(bad.isEmpty(), bad.size() + " cases served wrong data or threw raw exceptions:\n"
                + String.join("\n", bad.subList(0, Math.min(20, bad.size()))));
        assertTrue(counts[Verdict.REFUSED.ordinal()] + counts[Verdict.DETECTED.ordinal()] > CASES / 3,
                "the flips were hardly ever noticed: " + Arrays.toString(counts));
    }

    /** Opens, reads every key, writes some, closes; says how the case ended. */
    private static Verdict run(Path p, String label, List<String> bad) {
        GPHashIndex index;
        try {
            index = GPHashIndex.builder(p).open();
        } catch (GPHashException e) {
            return Verdict.REFUSED;
        } catch (RuntimeException | Error e) {
            bad.add(label + ": open threw " + e);
            return Verdict.RAW_EXCEPTION;
        }
        boolean detected = false;
        boolean wrong = false;
        try {
            for (long k = 1; k <= ITEMS; k++) {
                try {
                    byte[] got = index.get(k);
                    if (!Arrays.equals(ToolFixture.value(k), got)) {
                        wrong = true;
                        bad.add(label + ": key " + k + " read " + (got == null ? "as absent" : "a wrong value"));
                        break;
                    }
                } catch (GPHashException e) {
                    detected = true;
                }
            }
            for (long k = 1; k <= ITEMS && !wrong; k += 7) {
                try {
                    index.put(k, ToolFixture.value(k + 1));
                    index.put(ITEMS + k, ToolFixture.value(ITEMS + k));
                    if (!Arrays.equals(ToolFixture.value(k + 1), index.get(k))
                            || !Arrays.equals(ToolFixture.value(ITEMS + k), index.get(ITEMS + k))) {
                        wrong = true;
                        bad.add(label + ": a value written after open reads back wrong (key " + k + ")");
                    }
                } catch (GPHashException e) {
                    detected = true;
                }
            }
        } catch (RuntimeException | Error e) {
            bad.add(label + ": an operation threw " + e);
            closeQuietly(index);
            return Verdict.RAW_EXCEPTION;
        }
        try {
            index.close();
        } catch (GPHashException e) {
            detected = true;
        } catch (RuntimeException | Error e) {
            bad.add(label + ": close threw " + e);
            return Verdict.RAW_EXCEPTION;
        }
        return wrong ? Verdict.SERVED_WRONG : detected ? Verdict.DETECTED : Verdict.CORRECT;
    }

    private static void closeQuietly(GPHashIndex index) {
        try {
            index.close();
        } catch (RuntimeException | Error ignored) {
            // the case already failed
        }
    }
}
