package org.gphash;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

class SmokeTest {
    private final TestPools pools = TestPools.create();

    @org.junit.jupiter.api.AfterEach
    void cleanUp() {
        pools.close();
    }

    static byte[] val(long k, int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) k);
        b[0] = (byte) (k >>> 8);
        return b;
    }

    @Test
    void basicOpsAcrossResizeAndReopen() {
        Path p = pools.pool("a.pool");
        int n = 20000;
        try (GPHashIndex idx = GPHashIndex.builder(p).initialCapacity(100).seed(1).create()) {
            for (long k = 0; k < n; k++) {
                assertTrue(idx.insert(k, val(k, 128)), "insert " + k);
            }
            for (long k = 0; k < n; k++) {
                assertArrayEquals(val(k, 128), idx.get(k), "get " + k);
            }
            assertFalse(idx.insert(5L, val(6, 128)));
            assertTrue(idx.update(5L, val(7, 128)));
            assertArrayEquals(val(7, 128), idx.get(5L));
            assertTrue(idx.delete(6L));
            assertNull(idx.get(6L));
            System.out.println(idx.stats());
        }
        try (GPHashIndex idx = GPHashIndex.builder(p).open()) {
            System.out.println(idx.lastRecovery());
            assertEquals(n - 1, idx.stats().size());
            for (long k = 0; k < n; k++) {
                if (k == 6) {
                    assertNull(idx.get(k));
                } else {
                    assertArrayEquals(val(k == 5 ? 7 : k, 128), idx.get(k), "get " + k);
                }
            }
        }
    }
}
