/**
 * The index: the API ({@code org.gphash}), the engine SPI ({@code org.gphash.spi}) and the CPU engine
 * with the table both engines share ({@code org.gphash.index}: not API, exported only to the GPU
 * engine, the recovery tool and the benchmarks). The GPU engine (gphash-cuda) and the front end for
 * many callers (gphash-frontend: the coalescer, the host read cache, {@code recordStats()}) are found
 * through {@link java.util.ServiceLoader}; both stay automatic modules, as their libraries (JCuda,
 * HdrHistogram) name no module.
 */
module org.gphash {
    requires transitive org.gphash.persistence;
    requires transitive org.gphash.bktcache;
    // The engine's JFR events are optional: a runtime without jdk.jfr runs without them (JfrEvents).
    requires static jdk.jfr;

    exports org.gphash;
    exports org.gphash.spi;
    exports org.gphash.index to org.gphash.cuda, org.gphash.recovery, org.gphash.bench;
    exports org.gphash.shard to org.gphash.cuda, org.gphash.recovery, org.gphash.bench;

    uses org.gphash.spi.EngineFactory;
    provides org.gphash.spi.EngineFactory with org.gphash.index.CpuEngineFactory;
    uses org.gphash.spi.ShardedIndexFactory;
    provides org.gphash.spi.ShardedIndexFactory with org.gphash.shard.ShardedIndexes;
    uses org.gphash.spi.FrontEnd.Factory;
}
