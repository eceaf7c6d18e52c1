package org.gphash.table;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.gphash.format.SlotMeta;

/**
 * A slot's key against a caller's key, by {@link Slots#keyEquals}: equal exactly when every byte is,
 * for the key sizes it compares as words (8, 16) and for the others, with the caller's key in native
 * memory or in a Java array at any offset.
 */
class SlotsKeyEqualsTest {

    @Property(tries = 600)
    void equalExactlyWhenEveryByteIs(@ForAll @IntRange(min = 1, max = 40) int keySize,
                                     @ForAll @IntRange(min = 0, max = 15) int callerOffset,
                                     @ForAll @IntRange(min = -1, max = 39) int differAt,
                                     @ForAll long seed, @ForAll boolean onHeap) {
        int differ = differAt < keySize ? differAt : -1;  // -1: the same key
        byte[] bytes = new byte[keySize];
        new Random(seed).nextBytes(bytes);
        try (Arena arena = Arena.ofConfined()) {
            long slot = 64;  // 8-aligned, as slots are
            MemorySegment pool = arena.allocate(slot + SlotMeta.BYTES + keySize + 64, 8);
            MemorySegment.copy(bytes, 0, pool, ValueLayout.JAVA_BYTE, slot + SlotMeta.BYTES, keySize);
            byte[] callers = new byte[callerOffset + keySize];
            System.arraycopy(bytes, 0, callers, callerOffset, keySize);
            if (differ >= 0) {
                callers[callerOffset + differ] ^= (byte) (1 << (seed & 7));
            }
            MemorySegment key = onHeap ? MemorySegment.ofArray(callers)
                    : arena.allocate(callers.length).copyFrom(MemorySegment.ofArray(callers));
            assertEquals(differ < 0, Slots.keyEquals(pool, slot, keySize, key, callerOffset),
                    "key of " + keySize + " bytes, differing at " + differ);
        }
    }
}
