package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.Arrays;

import org.gphash.GPHashIndex;
import org.junit.jupiter.api.Test;

class RoundTripTest {
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

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}-byte keys")
    @org.junit.jupiter.params.provider.ValueSource(ints = {16, 32, 13})
    void wideKeysAcrossResizesAndReopen(int keySize) {
        Path p = pools.pool("wide" + keySize + ".pool");
        int n = 5000;
        try (GPHashIndex idx = GPHashIndex.builder(p).keySize(keySize).valueSize(40).initialCapacity(64).seed(9).create()) {
            for (int k = 0; k < n; k++) {
                assertTrue(idx.insert(wideKey(k, keySize), val(k, 40)), "insert " + k);
            }
            assertTrue(idx.stats().resizes() > 0);
            for (int k = 0; k < n; k += 2) {
                assertTrue(idx.delete(wideKey(k, keySize)));
            }
        }
        try (GPHashIndex idx = GPHashIndex.builder(p).keySize(keySize).open()) {
            assertEquals(n / 2, idx.stats().size());
            for (int k = 0; k < n; k++) {
                byte[] v = idx.get(wideKey(k, keySize));
                if (k % 2 == 0) {
                    assertNull(v, "deleted " + k);
                } else {
                    assertArrayEquals(val(k, 40), v, "key " + k);
                }
            }
        }
    }

    /** Keys that differ only in their last byte and a byte in the middle, to exercise every word of the hash. */
    private static byte[] wideKey(int k, int keySize) {
        byte[] key = new byte[keySize];
        Arrays.fill(key, (byte) 0x5A);
        key[keySize - 1] = (byte) k;
        key[keySize / 2] = (byte) (k >>> 8);
        return key;
    }
}
