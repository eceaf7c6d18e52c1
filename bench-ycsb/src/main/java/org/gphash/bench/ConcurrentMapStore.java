package org.gphash.bench;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

import org.gphash.Outcome;

/**
 * {@link ConcurrentHashMap} as the volatile upper bound: no persistence, no pool file, values as
 * heap arrays. Keys are wrapped as {@link Key} (8-byte keys could be boxed longs, but one key type
 * keeps 8- and 32-byte runs comparable). Values are copied in and out, as every other system does.
 */
public final class ConcurrentMapStore implements StoreUnderTest {

    private final ConcurrentHashMap<Key, byte[]> map;
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
        byte[] keys = batch.keyBytes();
        byte[] values = batch.valueBytes();
        for (int i = 0; i < batch.size(); i++) {
            Key key = new Key(Arrays.copyOfRange(keys, i * keySize, (i + 1) * keySize));
            switch (batch.kind(i)) {
                case GET -> {
                    byte[] v = map.get(key);
                    if (v == null) {
                        results.set(i, Outcome.NOT_FOUND);
                    } else {
                        results.setValue(i, Outcome.FOUND, v, 0);
                    }
                }
                case PUT -> results.set(i, map.put(key, value(values, i)) == null ? Outcome.INSERTED : Outcome.UPDATED);
                case INSERT -> results.set(i, map.putIfAbsent(key, value(values, i)) == null ? Outcome.INSERTED : Outcome.EXISTS);
                case UPDATE -> results.set(i, map.replace(key, value(values, i)) == null ? Outcome.NOT_FOUND : Outcome.UPDATED);
                case DELETE -> results.set(i, map.remove(key) == null ? Outcome.NOT_FOUND : Outcome.DELETED);
                case READ_MODIFY_WRITE -> {
                    byte[] previous = map.replace(key, value(values, i));
                    if (previous == null) {
                        results.set(i, Outcome.NOT_FOUND);
                    } else {
                        results.setValue(i, Outcome.REPLACED, previous, 0);
                    }
                }
            }
        }
    }

    private byte[] value(byte[] values, int i) {
        return Arrays.copyOfRange(values, i * valueSize, (i + 1) * valueSize);
    }

    @Override
    public void close() {
        map.clear();
    }

    /** A key's bytes with value equality. */
    private record Key(byte[] bytes) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Arrays.equals(bytes, k.bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }
    }
}
