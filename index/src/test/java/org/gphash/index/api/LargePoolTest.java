package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;

import org.gphash.GPHashIndex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pool larger than 2 GiB: values at offsets past 2^31 are written, read back and survive a
 * reopen (a {@code ByteBuffer}-based mapping could not address them). Uses 1 MiB values so the
 * pool passes 2 GiB with few items; the file is sparse until written.
 */
class LargePoolTest {

    private static final int VALUE_SIZE = 1 << 20;
    private static final int ITEMS = 2300;

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    private static byte[] value(long key) {
        byte[] v = new byte[VALUE_SIZE];
        Arrays.fill(v, (byte) key);
        v[0] = (byte) (key >>> 8);
        v[VALUE_SIZE - 1] = (byte) (key * 7);
        return v;
    }

    @Test
    void poolsOver2GiBWork() {
        var path = pools.pool("large.pool");
        try (GPHashIndex index = GPHashIndex.builder(path).valueSize(VALUE_SIZE).initialCapacity(ITEMS).seed(5).create()) {
            for (long k = 0; k < ITEMS; k++) {
                assertTrue(index.insert(k, value(k)));
            }
            // The heap grows with the data: 2300 values of 1 MiB take the pool past 2 GiB.
            assertTrue(index.stats().fileBytes() > (1L << 31) + (1L << 26), "pool is over 2 GiB: " + index.stats().fileBytes());
        }
        try (GPHashIndex index = GPHashIndex.builder(path).open()) {
            assertEquals(ITEMS, index.stats().size());
            for (long k = 0; k < ITEMS; k++) {
                assertArrayEquals(value(k), index.get(k), "value of key " + k);
            }
        }
    }
}
