package org.gphash.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

import org.gphash.Outcome;
import org.gphash.spi.SegmentBytes;

/**
 * {@link ConcurrentHashMap} as the volatile upper bound: no persistence, no pool file, values as
 * heap arrays. 8-byte keys are boxed longs (their own well-spread hash); other sizes are wrapped as
 * {@link Key}, whose hash mixes every byte (a polynomial hash of 8 little-endian bytes collides so
 * often that the map's bins turn into trees, which made this "upper bound" slower than the engine).
 * Values are copied in and out, as every other system does.
 */
public final class ConcurrentMapStore implements StoreUnderTest {

    private static final ValueLayout.OfLong KEY_LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private final ConcurrentHashMap<Object, byte[]> map;
    private final int keySize;
    private final int valueSize;

    public ConcurrentMapStore(StoreConfig config) {
        this.keySize = config.keySize();
        this.valueSize = config.valueSize();
        this.map = new ConcurrentHashMap<>((int) Math.min(1 << 30, Math.max(16, config.expectedItems())));
    }

    @Override
    public String name() {
        return "chm";
    }

    @Override
    public String description() {
        return "java.util.concurrent.ConcurrentHashMap, volatile (nothing persisted): an upper bound";
    }

    @Override
    public void execute(OpBatch batch, OpResults results) {
        int n = batch.size();
        results.reset(n);
        MemorySegment keys = batch.keys();
        MemorySegment values = batch.values();
        for (int i = 0; i < n; i++) {
            Object key = keySize == 8 ? (Object) keys.get(KEY_LONG, (long) i << 3) : new Key(keys, i, keySize);
            switch (batch.kind(i)) {
                case GET -> {
                    byte[] v = map.get(key);
                    if (v == null) {
                        results.set(i, Outcome.NOT_FOUND);
                    } else {
                        results.setValue(i, Outcome.FOUND, v, 0, v.length);
                    }
                }
                case PUT -> results.set(i, map.put(key, value(batch, values, i)) == null ? Outcome.INSERTED : Outcome.UPDATED);
                case INSERT -> results.set(i, map.putIfAbsent(key, value(batch, values, i)) == null ? Outcome.INSERTED : Outcome.EXISTS);
                case UPDATE -> results.set(i, map.replace(key, value(batch, values, i)) == null ? Outcome.NOT_FOUND : Outcome.UPDATED);
                case DELETE -> results.set(i, map.remove(key) == null ? Outcome.NOT_FOUND : Outcome.DELETED);
                case READ_MODIFY_WRITE -> {
                    byte[] previous = map.replace(key, value(batch, values, i));
                    if (previous == null) {
                        results.set(i, Outcome.NOT_FOUND);
                    } else {
                        results.setValue(i, Outcome.REPLACED, previous, 0, previous.length);
                    }
                }
            }
        }
    }

    /** Value {@code i} at its length (the value size, or its own where lengths vary). */
    private byte[] value(OpBatch batch, MemorySegment values, int i) {
        return SegmentBytes.copyOf(values, batch.valueOffset(i), batch.valueLength(i));
    }

    @Override
    public void close() {
        map.clear();
    }

    /** A key's bytes with value equality and a hash that mixes every byte. */
    private static final class Key {
        private final byte[] bytes;
        private final int hash;

        Key(MemorySegment keys, int i, int keySize) {
            this.bytes = SegmentBytes.copyOf(keys, (long) i * keySize, keySize);
            long h = 0;
            for (byte b : bytes) {
                h = KeyCodec.mix(h * 31 + b);
            }
            this.hash = (int) (h ^ (h >>> 32));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Arrays.equals(bytes, k.bytes);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }
}
