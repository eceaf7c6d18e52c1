package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.gphash.Cursor;
import org.gphash.GPHashIndex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Issue 55, item 4: a cursor's accessors with no current entry say so (they threw IndexOutOfBoundsException). */
class CursorStateTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    @Test
    void accessorsBeforeTheFirstAndAfterTheLastEntryAreRefusedClearly() {
        try (GPHashIndex index = GPHashIndex.builder(pools.pool("c.pool")).keySize(8).valueSize(8).create()) {
            index.put(1L, new byte[8]);
            try (Cursor c = index.cursor()) {
                IllegalStateException before = assertThrows(IllegalStateException.class, c::longKey);
                assertTrue(before.getMessage().contains("call next() first"), before.getMessage());
                assertTrue(c.next());
                c.value();
                assertFalse(c.next());
                for (org.junit.jupiter.api.function.Executable accessor : new org.junit.jupiter.api.function.Executable[] {
                        c::key, c::longKey, c::value, c::keySegment, c::valueSegment}) {
                    IllegalStateException after = assertThrows(IllegalStateException.class, accessor);
                    assertTrue(after.getMessage().contains("exhausted"), after.getMessage());
                }
            }
        }
    }
}
