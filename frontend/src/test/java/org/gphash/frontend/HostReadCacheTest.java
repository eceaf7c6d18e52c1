package org.gphash.frontend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** The host read cache's rules, one thread: what a write to one key or to every key leaves it able to serve. */
class HostReadCacheTest {

    private static HostReadCache.KeyBytes key(int k) {
        return new HostReadCache.KeyBytes(new byte[] {(byte) k, 1, 2, 3});
    }

    @Test
    void aReadOfferedUnderAnUnmovedStampIsServed() {
        HostReadCache c = new HostReadCache(1 << 20);
        long stamp = c.stamp(key(1));
        c.offer(key(1), stamp, new byte[] {7});
        assertArrayEquals(new byte[] {7}, c.get(key(1)));
        assertNull(c.get(key(2)));
        assertEquals(1, c.hits());
        assertEquals(1, c.misses());
    }

    @Test
    void aWriteToTheKeyRefusesAReadStampedBeforeItAndDropsWhatWasCached() {
        HostReadCache c = new HostReadCache(1 << 20);
        c.offer(key(1), c.stamp(key(1)), new byte[] {7});
        long stamp = c.stamp(key(1));
        c.written(key(1));
        assertNull(c.get(key(1)));
        c.offer(key(1), stamp, new byte[] {8});
        assertNull(c.get(key(1)), "read before the write, offered after it");
    }

    @Test
    void aWriteToEveryKeyKillsEveryEntryAndRefusesEveryEarlierStamp() {
        HostReadCache c = new HostReadCache(1 << 20);
        for (int k = 0; k < 10; k++) {
            c.offer(key(k), c.stamp(key(k)), new byte[] {(byte) k});
        }
        long early = c.stamp(key(3));
        c.writtenAll();
        for (int k = 0; k < 10; k++) {
            assertNull(c.get(key(k)), "key " + k + " was cached before the bulk write");
        }
        c.offer(key(3), early, new byte[] {33});
        assertNull(c.get(key(3)), "read before the bulk write, offered after it");
        c.offer(key(3), c.stamp(key(3)), new byte[] {34});
        assertArrayEquals(new byte[] {34}, c.get(key(3)), "read after it");
        c.writtenAll();
        assertNull(c.get(key(3)));
    }
}
