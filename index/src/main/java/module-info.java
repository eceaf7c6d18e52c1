/**
 * The index: the CPU engine with the table both engines share ({@code org.gphash.index}) and the
 * sharded index ({@code org.gphash.shard}). Neither package is API: they are exported only to the GPU
 * engine, the recovery tool and the benchmarks. The API and the SPI are module {@code org.gphash}
 * (gphash-api), which finds both engines here through {@link java.util.ServiceLoader}.
 */
module org.gphash.index {
    requires transitive org.gphash;
    requires transitive org.gphash.persistence;
    // The engine's JFR events are optional: a runtime without jdk.jfr runs without them (JfrEvents).
    requires static jdk.jfr;

    exports org.gphash.index to org.gphash.cuda, org.gphash.recovery, org.gphash.bench;
    exports org.gphash.shard to org.gphash.cuda, org.gphash.recovery, org.gphash.bench, org.gphash.cluster;

    provides org.gphash.spi.EngineFactory with org.gphash.index.CpuEngineFactory;
    provides org.gphash.spi.ShardedIndexFactory with org.gphash.shard.ShardedIndexes;
}
