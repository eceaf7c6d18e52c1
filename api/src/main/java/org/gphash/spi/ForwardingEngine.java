package org.gphash.spi;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.EntryChunk;
import org.gphash.Geometry;
import org.gphash.IndexStats;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;

/**
 * An engine that passes every call to another (in the manner of Guava's forwarding collections):
 * the layers of a {@link FrontEnd} (the coalescer, the stats recorder) override what they add to and
 * inherit the rest. {@link Engine#submit} is not passed on: it runs this engine's own
 * {@link #execute}, so that a layer which overrides execute sees submitted batches too.
 */
public abstract class ForwardingEngine implements Engine {

    /** The engine calls go on to. */
    protected final Engine engine;

    /**
     * An engine that passes every call on to {@code engine}.
     *
     * @param engine the engine calls go on to
     */
    protected ForwardingEngine(Engine engine) {
        this.engine = engine;
    }

    @Override
    public Geometry geometry() {
        return engine.geometry();
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        return engine.get(key, valueOut);
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        return engine.put(key, value);
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        return engine.insert(key, value);
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        return engine.update(key, value);
    }

    @Override
    public Outcome delete(MemorySegment key) {
        return engine.delete(key);
    }

    @Override
    public Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value) {
        return engine.compareAndSet(key, expected, value);
    }

    @Override
    public Outcome compareAndDelete(MemorySegment key, MemorySegment expected) {
        return engine.compareAndDelete(key, expected);
    }

    @Override
    public void execute(Batch batch, BatchResult result) {
        engine.execute(batch, result);
    }

    @Override
    public IndexStats stats() {
        return engine.stats();
    }

    @Override
    public List<IndexStats> shardStats() {
        return engine.shardStats();
    }

    @Override
    public long poolIdentity() {
        return engine.poolIdentity();
    }

    @Override
    public void commitShardMembership(long indexId, long seed, int shard, int shards, long epoch) {
        engine.commitShardMembership(indexId, seed, shard, shards, epoch);
    }

    @Override
    public ScanState startScan() {
        return engine.startScan();
    }

    @Override
    public void readEntries(ScanState state, EntryChunk chunk) {
        engine.readEntries(state, chunk);
    }

    @Override
    public void snapshot(Path target) {
        engine.snapshot(target);
    }

    @Override
    public RecoveryReport lastRecovery() {
        return engine.lastRecovery();
    }

    @Override
    public boolean reloadBucketCache(boolean wait) {
        return engine.reloadBucketCache(wait);
    }

    @Override
    public boolean ordersOperationsOnAKey() {
        return engine.ordersOperationsOnAKey();
    }

    @Override
    public void sync() {
        engine.sync();
    }

    @Override
    public void close() {
        engine.close();
    }

    @Override
    public void abandon() {
        engine.abandon();
    }
}
