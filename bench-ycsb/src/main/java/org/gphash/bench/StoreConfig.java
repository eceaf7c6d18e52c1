package org.gphash.bench;

import java.nio.file.Path;

/**
 * What every store of a run is created with: where its files go and the sizes of the data.
 *
 * @param directory      a fresh directory for this store's files (tmpfs when possible)
 * @param keySize        bytes per key
 * @param valueSize      bytes per value
 * @param expectedItems  items the store will hold at most (pre-sizing for stores that need it)
 * @param seed           the engine's hash seed
 */
public record StoreConfig(Path directory, int keySize, int valueSize, long expectedItems, long seed) {
}
