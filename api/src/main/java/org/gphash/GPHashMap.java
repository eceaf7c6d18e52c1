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

/**
 * A typed view of an index as a {@link ConcurrentMap}, keys and values turned into the pool's fixed
 * sizes by {@link Codec}s (in the manner of Chronicle Map):
 *
 * <pre>{@code
 * record Point(double x, double y) {}
 * try (GPHashIndex index = GPHashIndex.builder(path).keySize(8).valueSize(16).openOrCreate()) {
 *     ConcurrentMap<Long, Point> points = GPHashMap.of(index, Codec.longs(), Codec.record(MethodHandles.lookup(), Point.class));
 *     points.put(7L, new Point(1, 2));
 *     points.merge(7L, new Point(0, 1), (a, b) -> new Point(a.x() + b.x(), a.y() + b.y()));
 * }
 * }</pre>
 *
 * <p>Reads go straight to the index. The writes that depend on the current value (put and remove
 * returning the old value, {@code putIfAbsent}, {@code replace}, conditional {@code remove}, and the
 * {@code compute}/{@code merge} family built on them) are built on the index's own conditional
 * writes ({@link GPHashIndex#compareAndSet}, {@link GPHashIndex#compareAndDelete}, insert-if-absent),
 * each one atomic step in the engine, retried when another writer came first: so they are
 * linearizable against every other writer of the pool, through any number of maps over the index
 * or the index itself (issue 28: two maps over one index kept a striped lock each and lost updates).
 * Values are compared by their encoded bytes. Iteration is weakly consistent, as
 * the index's {@link Cursor} is. Null keys and values are refused. Closing the index ends the map.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class GPHashMap<K, V> extends AbstractMap<K, V> implements ConcurrentMap<K, V> {

    private final GPHashIndex index;
    private final Codec<K> keys;
    private final Codec<V> values;
    private final EntrySet entrySet = new EntrySet();

    private GPHashMap(GPHashIndex index, Codec<K> keys, Codec<V> values) {
        this.index = index;
        this.keys = keys;
        this.values = values;
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
     * @throws IllegalArgumentException if a codec's size is not the pool's (a value codec of
     *                                  {@link Codec#VARIABLE} size needs a pool of values of any length)
     */
    public static <K, V> GPHashMap<K, V> of(GPHashIndex index, Codec<K> keys, Codec<V> values) {
        Objects.requireNonNull(index, "index");
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(values, "values");
        if (keys.size() == Codec.VARIABLE) {
            throw new IllegalArgumentException("keys have the pool's key size (" + index.keySize() + " bytes): a codec of "
                    + "keys of any length cannot encode them; use Codec.strings(max) or Codec.bytesUpTo(max)");
        }
        if (values.size() == Codec.VARIABLE && !index.valueLengths()) {
            throw new IllegalArgumentException("the value codec encodes values of any length; pool " + index.path()
                    + " holds values of " + index.valueSize() + " bytes each (values of any length are a format 3 "
                    + "pool's on the CPU backend: poolFormat(3))");
        }
        if (keys.size() != index.keySize() || values.size() != index.valueSize() && values.size() != Codec.VARIABLE) {
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
        Objects.requireNonNull(key, "key");
        return keys.type().isInstance(key) ? keys.encode(keys.type().cast(key)) : null;
    }

    /** Null throws, as in {@link java.util.concurrent.ConcurrentHashMap#containsValue}. */
    @Override
    public boolean containsValue(Object value) {
        Objects.requireNonNull(value, "value");
        return super.containsValue(value);
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
        for (;;) {
            byte[] old = index.get(k);
            if (old == null ? index.insert(k, v) : index.compareAndSet(k, old, v)) {
                return decode(old);
            }
        }
    }

    @Override
    public V putIfAbsent(K key, V value) {
        byte[] k = keys.encode(key);
        byte[] v = values.encode(value);
        for (;;) {
            if (index.insert(k, v)) {
                return null;
            }
            byte[] old = index.get(k);
            if (old != null) {
                return decode(old);
            }
        }
    }

    @Override
    public V remove(Object key) {
        byte[] k = keyBytes(key);
        if (k == null) {
            return null;
        }
        for (;;) {
            byte[] old = index.get(k);
            if (old == null || index.compareAndDelete(k, old)) {
                return decode(old);
            }
        }
    }

    @Override
    public boolean remove(Object key, Object value) {
        byte[] k = keyBytes(key);
        if (k == null || !values.type().isInstance(value)) {
            return false;
        }
        return index.compareAndDelete(k, values.encode(values.type().cast(value)));
    }

    @Override
    public boolean replace(K key, V oldValue, V newValue) {
        byte[] k = keys.encode(key);
        byte[] expected = values.encode(oldValue);
        byte[] v = values.encode(newValue);
        return index.compareAndSet(k, expected, v);
    }

    @Override
    public V replace(K key, V value) {
        byte[] k = keys.encode(key);
        byte[] v = values.encode(value);
        for (;;) {
            byte[] old = index.get(k);
            if (old == null || index.compareAndSet(k, old, v)) {
                return decode(old);
            }
        }
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
    private final class WriteThroughEntry extends AbstractMap.SimpleEntry<K, V> {
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
