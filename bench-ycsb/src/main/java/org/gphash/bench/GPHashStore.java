package org.gphash.bench;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.GPHashIndex;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;

/**
 * The GPHash engine through its public API, on the CPU or the GPU backend: each {@link OpBatch}
 * becomes one {@link Batch}, executed with {@link GPHashIndex#execute(Batch, BatchResult)}.
 * Per-thread batches are kept in a {@link ThreadLocal} so that their memory is reused.
 */
public class GPHashStore implements StoreUnderTest {

    /** Geometry as in the demo (the engine's defaults). */
    static final int LEVELS = 2;
    static final int HASHES = 2;
    static final int SLOTS_PER_BUCKET = 8;

    protected final GPHashIndex index;
    private final Backend backend;
    private final org.gphash.Durability durability;
    private final ThreadLocal<Scratch> scratch;

    /** @throws org.gphash.BackendUnavailableException if the backend cannot run on this machine */
    public GPHashStore(StoreConfig config, Backend backend) {
        this(config, backend, org.gphash.Durability.PER_BATCH);
    }

    /** With a durability mode other than the default (the CPU engine; the GPU engine persists per batch). */
    public GPHashStore(StoreConfig config, Backend backend, org.gphash.Durability durability) {
        this.backend = backend;
        this.durability = durability;
        this.index = GPHashIndex.builder(config.directory().resolve("gphash-" + backend.name().toLowerCase() + "-"
                        + durability.name().toLowerCase() + ".pool"))
                .durability(durability)
                // -Dgphash.bench.coalescing=off measures the engine without the coalescer (merging
                // the client threads' batches is the default for the GPU backend).
                .coalescing("off".equals(System.getProperty("gphash.bench.coalescing"))
                        ? org.gphash.Coalescing.OFF : org.gphash.Coalescing.AUTO)
                .keySize(config.keySize()).valueSize(config.valueSize())
                .levels(LEVELS).hashes(HASHES).slotsPerBucket(SLOTS_PER_BUCKET)
                // Sized for the load, as the paper's runs are: resizes are measured by the demo.
                .initialCapacity(Math.max(1024, config.expectedItems()))
                .seed(config.seed())
                .backend(backend)
                .create();
        this.scratch = ThreadLocal.withInitial(() -> new Scratch(index));
    }

    @Override
    public String name() {
        return backend == Backend.GPU ? "gphash-gpu"
                : durability == org.gphash.Durability.PER_BATCH ? "gphash-cpu" : "gphash-per-op";
    }

    @Override
    public String description() {
        return "GPHash, " + backend + " engine, " + durability + ", " + index.stats().persistenceMode().description();
    }

    @Override
    public void execute(OpBatch batch, OpResults results) {
        Scratch s = scratch.get();
        s.batch.clear();
        int n = batch.size();
        for (int i = 0; i < n; i++) {
            batch.key(i, s.key);
            OpKind kind = batch.kind(i);
            if (kind.hasValue()) {
                batch.value(i, s.value);
            }
            s.batch.add(kind, s.key, s.value);
        }
        runBatch(s.batch, s.result);
        copyResults(s.result, n, results);
    }

    /** Runs one engine batch; the CPU-assisted store wraps this in the host/device copies. */
    protected void runBatch(Batch batch, BatchResult result) {
        index.execute(batch, result);
    }

    private void copyResults(BatchResult result, int n, OpResults results) {
        int vs = index.valueSize();
        var values = result.values();
        for (int i = 0; i < n; i++) {
            Outcome o = result.outcome(i);
            if (o == Outcome.FOUND || o == Outcome.REPLACED) {
                java.lang.foreign.MemorySegment.copy(values, java.lang.foreign.ValueLayout.JAVA_BYTE, (long) i * vs,
                        results.values, i * vs, vs);
            }
            results.set(i, o);
        }
    }

    @Override
    public Figures figures() {
        IndexStats s = index.stats();
        // The cache hit rate comes with BktCache (GPU engine); IndexStats has no such figure yet.
        return new Figures(s.loadFactor(), Double.NaN);
    }

    public IndexStats stats() {
        return index.stats();
    }

    @Override
    public void close() {
        index.close();
    }

    /** One thread's reusable engine batch, result and key/value buffers. */
    private static final class Scratch {
        final Batch batch;
        final BatchResult result;
        final byte[] key;
        final byte[] value;

        Scratch(GPHashIndex index) {
            this.batch = index.newBatch(4096);
            this.result = new BatchResult(index.valueSize(), 4096);
            this.key = new byte[index.keySize()];
            this.value = new byte[index.valueSize()];
        }
    }
}
