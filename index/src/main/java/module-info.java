/**
 * The index, by concept: the table both engines build on ({@code org.gphash.table}: layout, heap,
 * probe, recovery, checks), the CPU engine above it ({@code org.gphash.index}) and the sharded index
 * ({@code org.gphash.shard}). None of them is API: each is exported only to the modules built on it
 * (the GPU engine and the recovery tool read the pool through the table, not through the CPU
 * engine). The API and the SPI are module {@code org.gphash} (gphash-api), which finds the CPU engine
 * and the sharded index here through {@link java.util.ServiceLoader}.
 */
module org.gphash.index {
    requires transitive org.gphash;
    requires transitive org.gphash.persistence;
    // The engine's JFR events are optional: a runtime without jdk.jfr runs without them (JfrEvents).
    requires static jdk.jfr;

    exports org.gphash.table to org.gphash.cuda, org.gphash.recovery;
    exports org.gphash.index to org.gphash.cuda, org.gphash.bench, org.gphash.crashtest;
    exports org.gphash.shard to org.gphash.cuda, org.gphash.recovery, org.gphash.bench, org.gphash.cluster;

    provides org.gphash.spi.EngineFactory with org.gphash.index.CpuEngineFactory;
    provides org.gphash.spi.ShardedIndexFactory with org.gphash.shard.ShardedIndexes;
}
