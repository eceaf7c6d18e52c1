package org.gphash;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ServiceLoader;
import java.util.function.Predicate;

import org.gphash.spi.Engine;
import org.gphash.spi.EngineFactory;
import org.gphash.spi.FrontEnd;
import org.gphash.spi.JournalFactory;
import org.gphash.spi.ShardedIndexFactory;

/**
 * Puts an index together from a checked configuration: finds the providers (the backend's engine,
 * the journal, the sharded index, the front end) through {@link ServiceLoader}, so that the API
 * names no engine; opens or creates the engine, over a journal or shards where the configuration
 * says so; and decides whether a front end (coalescer, group commit, recorded stats) goes in front
 * of it. {@link GPHashIndex} holds what this returns and only forwards calls to it.
 */
final class IndexAssembly {

    private static final System.Logger LOG = System.getLogger("org.gphash");

    /**
     * What an index runs on.
     *
     * @param backend the backend's engine (a journal or a sharded index over engines included)
     * @param front   the front end in front of it, or null: calls go to the backend
     */
    record Parts(Engine backend, FrontEnd front) {
    }

    private IndexAssembly() {
    }

    /** Creates the index {@code c} configures (refused where the file exists). */
    static Parts create(GPHashConfig c, boolean recordStats) {
        c.geometryForCreate();
        EngineFactory engines = factory(c.backend());
        engines.prepare(c);
        FrontEnd.Factory fronts = frontEndsFor(c, recordStats);
        Engine engine = c.journaling() != null ? journals(c).create(c, pools(engines))
                : c.placement().sharded() ? sharding().create(c, engines) : engines.create(c);
        return withFront(engine, c, fronts, recordStats);
    }

    /** Opens the index {@code c} configures: a pool, a journaled pool or a sharded directory. */
    static Parts open(GPHashConfig c, boolean recordStats) {
        EngineFactory engines = factory(c.backend());
        engines.prepare(c);  // first: the GPU driver's start runs beside the checks below
        FrontEnd.Factory fronts = frontEndsFor(c, recordStats);
        if (c.journaling() != null) {
            return withFront(journals(c).open(c, pools(engines)), c, fronts, recordStats);
        }
        Path path = c.path();
        ShardedIndexFactory sharding = sharding();
        boolean directory = sharding.isShardedIndex(path);
        if (!directory && c.placement().sharded() && Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            throw new PoolConfigMismatchException(path + " is one pool file, not the directory of a sharded index; "
                    + "shards(n) opens or creates a directory of shards: leave shards() unset to open this pool "
                    + "(nothing was opened)");
        }
        String shard = directory ? null : sharding.shardOfAnIndex(path);
        if (shard != null) {
            throw new PoolConfigMismatchException(shard);
        }
        Engine engine = directory ? sharding.open(c, engines) : engines.open(c);
        return withFront(engine, c, fronts, recordStats);
    }

    /** An engine made elsewhere, with the front end {@code config} asks for where it is on the path. */
    static Parts over(Engine engine, GPHashConfig config, boolean recordStats) {
        return withFront(engine, config, frontEnds(), recordStats);
    }

    /** Whether the journal {@code c} names holds an index (its pool may be gone: open rebuilds it). */
    static boolean hasJournal(GPHashConfig c) {
        return journals(c).hasJournal(c);
    }

    /** GPUs the backend's engine sees (0 for the CPU engine). */
    static int visibleDevices(Backend backend) {
        return factory(backend).visibleDevices();
    }

    /**
     * The front end over {@code backend}, where one is needed. A CPU index whose persists flush to a
     * medium, with per-batch durability and no journal, coalesces single calls into batches by
     * default: one flush then serves many calls (group commit). A journaled index's group commit is
     * the journal's: the pool itself flushes nothing.
     */
    private static Parts withFront(Engine backend, GPHashConfig config, FrontEnd.Factory fronts, boolean recordStats) {
        boolean groupCommit = config.backend() == Backend.CPU && config.durability() == Durability.PER_BATCH
                && config.journaling() == null && flushesToMedium(backend.stats().persistenceMode());
        Coalescing coalescing = groupCommit && config.coalescing().mode() == Coalescing.Mode.AUTO
                ? config.coalescing().forGroupCommit() : config.coalescing();
        boolean coalesce = coalescing.appliesTo(config.backend(), groupCommit);
        if (coalesce && fronts == null) {
            // Only AUTO gets here (frontEndsFor refused ON without the front end): run calls directly.
            LOG.log(System.Logger.Level.DEBUG, "single calls on " + config.path() + " run one by one: coalescing them "
                    + "needs gphash-frontend (org.gphash:gphash-frontend), which is not on the class or module path");
            coalesce = false;
        }
        FrontEnd front = coalesce || recordStats
                ? fronts.over(backend, coalesce ? coalescing : null, recordStats, config.path()) : null;
        return new Parts(backend, front);
    }

    /** Whether a persist in {@code mode} is a flush to a medium (msync of a disk-backed file), not a no-op or cache flush. */
    private static boolean flushesToMedium(PersistenceMode mode) {
        return mode == PersistenceMode.PMEM_MSYNC || mode == PersistenceMode.FORCE;
    }

    /**
     * The front end's factory for an index with these settings: null when it is not on the path
     * and nothing needs it; refused, before anything is opened, when coalescing is asked for
     * ({@link Coalescing.Mode#ON}) or calls are recorded and it is not there.
     */
    private static FrontEnd.Factory frontEndsFor(GPHashConfig c, boolean recordStats) {
        if (c.coalescing().mode() == Coalescing.Mode.ON) {
            return requireFrontEnds("coalescing " + c.coalescing());
        }
        return recordStats ? requireFrontEnds("recordStats()") : frontEnds();
    }

    /** The journal's factory, refused with the reason where it cannot serve {@code c}. */
    private static JournalFactory journals(GPHashConfig c) {
        if (c.placement().sharded()) {
            throw new IllegalArgumentException("a journal for a sharded index is not supported yet: journal a "
                    + "single pool (docs/USAGE.md, \"Durable without persistent memory\"); nothing was opened or created");
        }
        JournalFactory f = provider(JournalFactory.class, x -> true);
        if (f == null) {
            throw new IllegalStateException("journal(" + c.journaling().directory() + ") needs gphash-journal "
                    + "(org.gphash:gphash-journal), which is not on the class or module path");
        }
        return f;
    }

    /** The assembly's own routes to a pool, for the journal's factory. */
    private static JournalFactory.Pools pools(EngineFactory engines) {
        return new JournalFactory.Pools() {
            @Override
            public Engine create(GPHashConfig config) {
                return engines.create(config);
            }

            @Override
            public Engine open(GPHashConfig config) {
                return engines.open(config);
            }
        };
    }

    /** gphash-frontend's factory, refused with what needs it when it is not on the path. */
    static FrontEnd.Factory requireFrontEnds(String what) {
        FrontEnd.Factory f = frontEnds();
        if (f == null) {
            throw new IllegalStateException(what + " needs gphash-frontend (org.gphash:gphash-frontend), which "
                    + "is not on the class or module path: add that dependency, or build the index without it");
        }
        return f;
    }

    /** gphash-frontend's factory, found as the engines' are (see {@link #provider}), or null. */
    private static FrontEnd.Factory frontEnds() {
        return provider(FrontEnd.Factory.class, f -> true);
    }

    /**
     * The backend's engine factory, found through {@link ServiceLoader} for every backend, the
     * CPU engine's ({@code org.gphash.index.CpuEngineFactory}) included, so that this package names
     * no engine.
     */
    private static EngineFactory factory(Backend backend) {
        EngineFactory f = provider(EngineFactory.class, e -> e.backend() == backend);
        if (f == null) {
            throw new BackendUnavailableException("the " + backend + " backend is not available in this build: "
                    + "no engine for it is on the class or module path (the CPU engine is org.gphash:gphash-index, "
                    + "the GPU engine org.gphash:gphash-cuda)");
        }
        return f;
    }

    /** The sharded indexes' factory ({@code org.gphash.shard.ShardedIndexes}, found as the engines' are). */
    private static ShardedIndexFactory sharding() {
        ShardedIndexFactory f = provider(ShardedIndexFactory.class, e -> true);
        if (f == null) {
            throw new IllegalStateException("no ShardedIndexFactory is on the class or module path: a sharded index "
                    + "needs org.gphash:gphash-index");
        }
        return f;
    }

    /**
     * The first provider of {@code type} that {@code wanted} accepts, or null: among the API's own
     * class loader's providers, then the context class loader's (an application's loader may see
     * the GPU engine's or the front end's jar where the API's does not).
     */
    private static <T> T provider(Class<T> type, Predicate<T> wanted) {
        for (ClassLoader loader : new ClassLoader[] {IndexAssembly.class.getClassLoader(),
                Thread.currentThread().getContextClassLoader()}) {
            for (T p : ServiceLoader.load(type, loader)) {
                if (wanted.test(p)) {
                    return p;
                }
            }
        }
        return null;
    }
}
