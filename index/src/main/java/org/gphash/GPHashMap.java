package org.gphash;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A typed view of an index as a {@link ConcurrentMap}, keys and values turned into the pool's fixed
 * sizes by {@link Codec}s (in the manner of Chronicle Map):
 *
 * <pre>{@code
 * record Point(double x, double y) {}
 * try (GPHashIndex index = GPHashIndex.builder(path).keySize(8).valueSize(16).openOrCreate()) {
 *     ConcurrentMap<Long, Point> points = GPHashMap.of(index, Codec.longs(), Codec.record(Point.class));
 *     points.put(7L, new Point(1, 2));
 *     points.merge(7L, new Point(0, 1), (a, b) -> new Point(a.x() + b.x(), a.y() + b.y()));
 * }
 * }</pre>
 *
 * <p>Reads go straight to the index. The map's own writes that depend on the current value (put and
 * remove returning the old value, {@code putIfAbsent}, {@code replace}, conditional {@code remove},
 * and the {@code compute}/{@code merge} family built on them) are atomic with respect to each other
 * through striped locks per key; writes made to the index directly, not through a map, are not
 * ordered with them. Values are compared by their encoded bytes. Iteration is weakly consistent, as
 * the index's {@link Cursor} is. Null keys and values are refused. Closing the index ends the map.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class GPHashMap<K, V> extends AbstractMap<K, V> implements ConcurrentMap<K, V> {

    private static final int STRIPES = 256;

    private final GPHashIndex index;
    private final Codec<K> keys;
    private final Codec<V> values;
    private final ReentrantLock[] locks = new ReentrantLock[STRIPES];
    private final EntrySet entrySet = new EntrySet();

    private GPHashMap(GPHashIndex index, Codec<K> keys, Codec<V> values) {
        this.index = index;
        this.keys = keys;
        this.values = values;
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new ReentrantLock();
        }
    }

    /**
     * A map over {@code index}.
     *
     * @param index  the index; its key and value sizes must be the codecs' sizes
     * @param keys   the key codec
     * @param values the value codec
     * @param <K>    the key type
     * @param <V>    the value type
     * @return the map
     * @throws IllegalArgumentException if a codec's size is not the pool's
     */
    public static <K, V> GPHashMap<K, V> of(GPHashIndex index, Codec<K> keys, Codec<V> values) {
        Objects.requireNonNull(index, "index");
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(values, "values");
        if (keys.size() != index.keySize() || values.size() != index.valueSize()) {
            throw new IllegalArgumentException("the codecs encode keys of " + keys.size() + " and values of " + values.size()
                    + " bytes; pool " + index.path() + " has keys of " + index.keySize() + " and values of "
                    + index.valueSize() + " bytes");
        }
        return new GPHashMap<>(index, keys, values);
    }

    /** {@return the index this map is a view of} */
    public GPHashIndex index() {
        return index;
    }

    /** The key's bytes, or null for a key of another type; null itself throws, as in ConcurrentHashMap. */
    private byte[] keyBytes(Object key) {
        java.util.Objects.requireNonNull(key, "key");
        return keys.type().isInstance(key) ? keys.encode(keys.type().cast(key)) : null;
    }

    /** Null throws, as in {@link java.util.concurrent.ConcurrentHashMap#containsValue}. */
    @Override
    public boolean containsValue(Object value) {
        java.util.Objects.requireNonNull(value, "value");
        return super.containsValue(value);
    }

    private ReentrantLock lockFor(byte[] key) {
        int h = Arrays.hashCode(key);
        return locks[(h ^ (h >>> 16)) & (STRIPES - 1)];
    }

    /** Runs {@code body} holding the lock of {@code key}'s stripe: map writes to one key in turn. */
    private <T> T locked(byte[] key, java.util.function.Supplier<T> body) {
        ReentrantLock lock = lockFor(key);
        lock.lock();
        try {
            return body.get();
        } finally {
            lock.unlock();
        }
    }

    /** Under {@code key}'s lock: reads the value, hands it (or null) to {@code write}, returns it decoded. */
    private V exchange(byte[] key, java.util.function.Consumer<byte[]> write) {
        return locked(key, () -> {
            byte[] old = index.get(key);
            write.accept(old);
            return decode(old);
        });
    }

    private V decode(byte[] value) {
        return value == null ? null : values.decode(value, 0);
    }

    @Override
    public V get(Object key) {
        byte[] k = keyBytes(key);
        return k == null ? null : decode(index.get(k));
    }

    @Override
    public boolean containsKey(Object key) {
        byte[] k = keyBytes(key);
        return k != null && index.containsKey(k);
    }

    @Override
    public V put(K key, V value) {
        byte[] k = keys.encode(key);
        byte[] v = values.encode(value);
        return exchange(k, old -> index.put(k, v));
    }

    @Override
    public V putIfAbsent(K key, V value) {
        byte[] k = keys.encode(key);
        byte[] v = values.encode(value);
        return locked(k, () -> index.insert(k, v) ? null : decode(index.get(k)));
    }

    @Override
    public V remove(Object key) {
        byte[] k = keyBytes(key);
        if (k == null) {
            return null;
        }
        return exchange(k, old -> {
            if (old != null) {
                index.delete(k);
            }
        });
    }

    @Override
    public boolean remove(Object key, Object value) {
        byte[] k = keyBytes(key);
        if (k == null || !values.type().isInstance(value)) {
            return false;
        }
        byte[] expected = values.encode(values.type().cast(value));
        return locked(k, () -> Arrays.equals(index.get(k), expected) && index.delete(k));
    }

    @Override
    public boolean replace(K key, V oldValue, V newValue) {
        byte[] k = keys.encode(key);
        byte[] expected = values.encode(oldValue);
        byte[] v = values.encode(newValue);
        return locked(k, () -> Arrays.equals(index.get(k), expected) && index.update(k, v));
    }

    @Override
    public V replace(K key, V value) {
        byte[] k = keys.encode(key);
        byte[] v = values.encode(value);
        return exchange(k, old -> {
            if (old != null) {
                index.update(k, v);
            }
        });
    }

    /** {@return the number of entries, at most {@link Integer#MAX_VALUE} (see {@link #longSize()})} */
    @Override
    public int size() {
        return (int) Math.min(Integer.MAX_VALUE, index.size());
    }

    /** {@return the number of entries} */
    public long longSize() {
        return index.size();
    }

    @Override
    public boolean isEmpty() {
        return index.size() == 0;
    }

    @Override
    public Set<Map.Entry<K, V>> entrySet() {
        return entrySet;
    }

    /**
     * An entry of the iteration whose {@code setValue} writes through to the map, as
     * {@code ConcurrentHashMap}'s do (issue 28: Guava's testlib failed on it): the value is put for
     * the key, and the entry shows it from then on.
     */
    private final class WriteThroughEntry extends java.util.AbstractMap.SimpleEntry<K, V> {
        private static final long serialVersionUID = 1L;

        WriteThroughEntry(K key, V value) {
            super(key, value);
        }

        @Override
        public V setValue(V value) {
            V old = super.setValue(Objects.requireNonNull(value, "value"));
            GPHashMap.this.put(getKey(), value);
            return old;
        }
    }

    /** The entries, read through a {@link Cursor} of the index. */
    private final class EntrySet extends AbstractSet<Map.Entry<K, V>> {
        @Override
        public Iterator<Map.Entry<K, V>> iterator() {
            return new Iterator<>() {
                private final Cursor cursor = index.cursor();
                private Map.Entry<K, V> next;
                private K last;

                @Override
                public boolean hasNext() {
                    if (next == null && cursor.next()) {
                        next = new WriteThroughEntry(keys.decode(cursor.key(), 0), values.decode(cursor.value(), 0));
                    }
                    return next != null;
                }

                @Override
                public Map.Entry<K, V> next() {
                    if (!hasNext()) {
                        throw new NoSuchElementException();
                    }
                    Map.Entry<K, V> e = next;
                    next = null;
                    last = e.getKey();
                    return e;
                }

                @Override
                public void remove() {
                    if (last == null) {
                        throw new IllegalStateException("next() first");
                    }
                    GPHashMap.this.remove(last);
                    last = null;
                }
            };
        }

        @Override
        public int size() {
            return GPHashMap.this.size();
        }

        @Override
        public void clear() {
            GPHashMap.this.clear();
        }
    }

    @Override
    public void clear() {
        Iterator<Map.Entry<K, V>> it = entrySet.iterator();
        while (it.hasNext()) {
            it.next();
            it.remove();
        }
    }
}
