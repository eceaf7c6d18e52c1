package org.gphash.spi;

import java.nio.file.Path;

import org.gphash.GPHashConfig;

/**
 * Makes sharded indexes (a directory of shard pools and a manifest, {@link org.gphash.Placement}) over
 * the engines of one backend. Found through {@link java.util.ServiceLoader} like the engines, so that
 * the API names no implementation ({@code org.gphash.shard.ShardedIndexes} in gphash-index).
 */
public interface ShardedIndexFactory {

    /**
     * Whether {@code path} is for this factory to open: a directory, which holds a sharded index or
     * one whose create did not finish (then {@link #open} says so); a pool is a file.
     *
     * @param path the index's path
     * @return true for a directory
     */
    boolean isShardedIndex(Path path);

    /**
     * Why the pool file at {@code path} must not be opened on its own, or null: it is a shard of a
     * sharded index, and keys written to it alone would be unreachable from the index.
     *
     * @param path a pool file
     * @return the reason, naming the index, or null
     */
    default String shardOfAnIndex(Path path) {
        return null;
    }

    /**
     * Creates a sharded index of {@code config.placement().shards()} shards at {@code config.path()},
     * which must not exist.
     *
     * @param config the index's configuration
     * @param shards the factory of the shards' engines
     * @return the engine over every shard
     */
    Engine create(GPHashConfig config, EngineFactory shards);

    /**
     * Opens the sharded index at {@code config.path()}, checking its manifest and every shard
     * pool's identity before anything is written.
     *
     * @param config the index's configuration
     * @param shards the factory of the shards' engines
     * @return the engine over every shard
     */
    Engine open(GPHashConfig config, EngineFactory shards);
}
