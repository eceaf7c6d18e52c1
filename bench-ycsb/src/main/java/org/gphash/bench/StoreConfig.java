package org.gphash.bench;

import java.nio.file.Path;
import java.util.Locale;

/**
 * What every store of a run is created with: where its files go and the sizes of the data.
 *
 * @param directory      a fresh directory for this store's files (tmpfs when possible)
 * @param keySize        bytes per key
 * @param valueSize      bytes per value: the longest where lengths are {@link ValueLengths#MIXED}
 * @param expectedItems  items the store will hold at most (pre-sizing for stores that need it)
 * @param seed           the engine's hash seed
 * @param lengths        whether values all have the value size or lengths of their own
 */
public record StoreConfig(Path directory, int keySize, int valueSize, long expectedItems, long seed, ValueLengths lengths) {

    /** Values of the value size. */
    public StoreConfig(Path directory, int keySize, int valueSize, long expectedItems, long seed) {
        this(directory, keySize, valueSize, expectedItems, seed, ValueLengths.FIXED);
    }

    /** Refuses, naming the store, lengths it does not take: it writes values of the value size only. */
    void requireFixedLengths(String store) {
        if (lengths != ValueLengths.FIXED) {
            throw new IllegalArgumentException(store + " takes values of the value size only: run --value-lengths "
                    + lengths.name().toLowerCase(Locale.ROOT) + " on gphash-cpu, chm or lmdb");
        }
    }
}
