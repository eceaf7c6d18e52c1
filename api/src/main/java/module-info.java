/**
 * The API ({@code org.gphash}) and the engine SPI ({@code org.gphash.spi}), with no engine in
 * either. The CPU engine and the sharded index (module {@code org.gphash.index}, jar gphash-index),
 * the GPU engine (gphash-cuda) and the front end for many callers (gphash-frontend) are found through
 * {@link java.util.ServiceLoader}: on the module path, service binding resolves every provider module
 * that is present, so an application's {@code requires org.gphash} is enough.
 */
module org.gphash {
    exports org.gphash;
    exports org.gphash.spi;
    exports org.gphash.error;
    exports org.gphash.bktcache;

    uses org.gphash.spi.EngineFactory;
    uses org.gphash.spi.ShardedIndexFactory;
    uses org.gphash.spi.FrontEnd.Factory;
    uses org.gphash.spi.JournalFactory;
}
