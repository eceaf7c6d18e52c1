package org.gphash.bench.ycsb;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Properties;

import org.gphash.Backend;
import org.gphash.Coalescing;
import org.gphash.GPHashIndex;
import org.gphash.cluster.GPHashCluster;
import org.gphash.cuda.GpuDiagnostics;
import org.gphash.cuda.GpuEngineFeatures;

/**
 * The one engine all of YCSB's client threads share. YCSB creates a {@code DB} per thread and
 * calls {@code init}/{@code cleanup} on each; a pool can be open only once per process, so the
 * first {@code init} opens it (or creates it) and the last {@code cleanup} closes it.
 */
final class SharedIndex {

    // The binding's properties (-p NAME=VALUE on YCSB's command line; GPHashDB's javadoc says what each does).
    static final String PATH = "gphash.path";
    static final String CLUSTER = "gphash.cluster";
    static final String KEY_SIZE = "gphash.keysize";
    static final String VALUE_SIZE = "gphash.valuesize";
    static final String POOL_FORMAT = "gphash.poolformat";
    static final String BACKEND = "gphash.backend";
    static final String INITIAL_CAPACITY = "gphash.initialcapacity";
    static final String COALESCING = "gphash.coalescing";
    static final String LINGER_US = "gphash.linger.us";
    static final String MAX_BATCH = "gphash.maxbatch";
    static final String HOST_CACHE_MB = "gphash.hostcache.mb";
    static final String ADAPTIVE = "gphash.adaptive";
    static final String SPIN_US = "gphash.spin.us";
    /** Batches the coalescer keeps in flight, 1 or 2 (default: Coalescing.AUTO's). */
    static final String IN_FLIGHT = "gphash.inflight";

    private static GPHashIndex index;
    private static Path openPath;
    private static int users;

    private SharedIndex() {
    }

    /** The shared index for these properties, opened on first use; pair with {@link #release()}. */
    static synchronized GPHashIndex acquire(Properties p) {
        String cluster = p.getProperty(CLUSTER);
        Path path = Path.of(cluster != null ? cluster : p.getProperty(PATH, "/dev/shm/gphash-ycsb.pool"));
        if (index == null && cluster != null) {
            // A cluster's client: its nodes hold the pools; single calls travel one message each
            // unless gphash.coalescing=on merges the threads' calls into batches.
            Coalescing c = p.getProperty(COALESCING) == null ? Coalescing.OFF : coalescing(p);
            index = GPHashCluster.client(path).coalescing(c).connect();
            openPath = path;
        } else if (index == null) {
            Backend backend = Backend.valueOf(p.getProperty(BACKEND, "cpu").toUpperCase(Locale.ROOT));
            GPHashIndex.Builder b = GPHashIndex.builder(path)
                    .keySize(Integer.parseInt(p.getProperty(KEY_SIZE, "8")))
                    .valueSize(p.getProperty(VALUE_SIZE) != null ? Integer.parseInt(p.getProperty(VALUE_SIZE))
                            : RecordCodec.valueSizeFor(p))
                    .initialCapacity(Long.parseLong(p.getProperty(INITIAL_CAPACITY,
                            p.getProperty("recordcount", "1000"))))
                    .backend(backend)
                    .coalescing(coalescing(p));
            if (p.getProperty(POOL_FORMAT) != null) {
                b.poolFormat(Integer.parseInt(p.getProperty(POOL_FORMAT)));
            }
            long t0 = System.nanoTime();
            index = b.openOrCreate();
            openPath = path;
            // YCSB counts each client thread's init in the run's time: the open is part of every figure.
            System.err.printf(Locale.ROOT, "gphash: %s backend opened %s in %.0f ms%n", backend, path,
                    (System.nanoTime() - t0) / 1e6);
        } else if (!openPath.equals(path)) {
            throw new IllegalStateException("this JVM already serves " + openPath + "; asked for " + path);
        }
        users++;
        return index;
    }

    /**
     * {@code gphash.coalescing} auto (default), on or off; {@code gphash.linger.us} (0);
     * {@code gphash.maxbatch} (65536); {@code gphash.hostcache.mb} (default: an eighth of the heap, at most 256; 0: none);
     * {@code gphash.adaptive} (false); {@code gphash.spin.us} (the default's, 50: how long waiting threads spin);
     * {@code gphash.inflight} (the default's, 1: batches the coalescer keeps in flight).
     */
    static org.gphash.Coalescing coalescing(Properties p) {
        org.gphash.Coalescing.Mode mode = org.gphash.Coalescing.Mode.valueOf(
                p.getProperty(COALESCING, "auto").toUpperCase(Locale.ROOT));
        return new org.gphash.Coalescing(mode,
                Duration.ofNanos(1000L * Long.parseLong(p.getProperty(LINGER_US, "0"))),
                Integer.parseInt(p.getProperty(MAX_BATCH, "65536")),
                p.getProperty(HOST_CACHE_MB) == null ? org.gphash.Coalescing.AUTO_HOST_CACHE
                        : (1L << 20) * Long.parseLong(p.getProperty(HOST_CACHE_MB)),
                Boolean.parseBoolean(p.getProperty(ADAPTIVE, "false")),
                p.getProperty(SPIN_US) == null ? org.gphash.Coalescing.AUTO.spin()
                        : Duration.ofNanos(1000L * Long.parseLong(p.getProperty(SPIN_US))),
                p.getProperty(IN_FLIGHT) == null ? org.gphash.Coalescing.AUTO.batchesInFlight()
                        : Integer.parseInt(p.getProperty(IN_FLIGHT)));
    }

    static synchronized void release() {
        if (users > 0 && --users == 0) {
            index.coalescerStats().ifPresent(s -> System.err.printf(Locale.ROOT,
                    "gphash: coalescer ran %d batches of %d operations (mean %.1f), host cache hit rate %.3f, %d gets run at once%n",
                    s.batches(), s.operations(), s.meanBatchSize(), s.hostCacheHitRate(), s.getsRunAtOnce()));
            index.gpu().ifPresent(g -> {
                if (g instanceof GpuEngineFeatures engine) {
                    GpuDiagnostics d = engine.diagnostics();
                    System.err.printf(Locale.ROOT, "gphash: host reads %d, host writes %d, host batches %d, lends %d, buckets refreshed %d%n",
                            d.hostReads(), d.hostWrites(), d.hostBatches(), d.hostLends(), d.refreshedBuckets());
                    System.err.printf(Locale.ROOT, "gphash: host heap growths %d, host stages %s%n", d.hostHeapGrowths(),
                            d.hostStageNanos(false));
                    System.err.println("gphash: " + d.routeCosts());
                    System.err.println("gphash: " + d.openTimes());
                }
            });
            // Both backends: the heap's chunks added since open and the blocks free and pending reclamation.
            System.err.println("gphash: " + index.stats());
            index.close();
            index = null;
            openPath = null;
        }
    }
}
