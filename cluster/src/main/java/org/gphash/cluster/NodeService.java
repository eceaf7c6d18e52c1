package org.gphash.cluster;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.EntryChunk;
import org.gphash.GPHashIndex;
import org.gphash.Outcome;
import org.gphash.spi.Engine;
import org.gphash.spi.ScanState;

/**
 * What a node does with the calls it gets: runs a part of a batch on its index, reports its
 * figures, hands out a scan's chunks. Independent of Hazelcast (the calls reach it through the
 * member's user context, or directly in tests), so the split and merge of batches is tested
 * without a cluster.
 *
 * <p>A part's columns are copied into a batch kept for the next part (a pool of them, one per
 * part running at once): a part of 2^19 operations is about 70 MB, and allocating its off-heap
 * columns anew for every part costs more than the copy.
 */
final class NodeService {

    /** The key under which a node's member holds its service in Hazelcast's user context. */
    static final String CONTEXT_KEY = "gphash.node";
    /** A scan not continued for this long is dropped (its client went away). */
    static final Duration SCAN_IDLE = Duration.ofMinutes(10);
    /** The most entries one scan call returns (about 9 MB at 136-byte entries). */
    static final int MAX_SCAN_CHUNK = 1 << 16;

    private static final boolean[] HAS_VALUE = OpKindTables.HAS_VALUE;
    private static final boolean[] CONDITIONAL = OpKindTables.CONDITIONAL;


    private final ClusterManifest manifest;
    private final int shard;
    private final String node;
    private final GPHashIndex index;
    private final int keySize;
    private final int valueSize;
    private final ConcurrentLinkedQueue<Scratch> scratch = new ConcurrentLinkedQueue<>();
    private final ConcurrentHashMap<String, Scan> scans = new ConcurrentHashMap<>();
    private volatile boolean serving;
    private volatile boolean stopping;
    /** Calls running now: a node that stops waits for them before it closes its index. */
    private final AtomicInteger inFlight = new AtomicInteger();

    /** A batch and a result kept for the next part. */
    private record Scratch(Batch batch, BatchResult result) {
    }

    /** A scan in progress and when it was last continued. */
    private static final class Scan {
        final ScanState state;
        volatile long lastUsed = System.nanoTime();

        Scan(ScanState state) {
            this.state = state;
        }
    }

    NodeService(ClusterManifest manifest, int shard, GPHashIndex index) {
        this.manifest = manifest;
        this.shard = shard;
        this.node = manifest.nodes().get(shard).name();
        this.index = index;
        this.keySize = index.keySize();
        this.valueSize = index.valueSize();
    }

    /** From now on the node answers calls (after it has claimed its shard in the cluster). */
    void startServing() {
        serving = true;
    }

    /**
     * Runs {@code call} on this node, once {@link #checkCall} accepts it, unless the node is
     * stopping; counted while it runs, so that {@link #stopServing} can wait for it.
     */
    <R> R serve(NodeCall<R> call) {
        checkCall(call.clusterId, call.shard);
        inFlight.incrementAndGet();
        try {
            if (stopping) {
                throw new IllegalStateException("node " + node + " (shard " + shard + ") is stopping");
            }
            return call.runOn(this);
        } finally {
            if (inFlight.decrementAndGet() == 0 && stopping) {
                synchronized (inFlight) {
                    inFlight.notifyAll();
                }
            }
        }
    }

    /**
     * Refuses new calls, then waits for those running to finish (their replies go out), at most
     * {@code patience}: what a node does before it leaves the cluster and closes its index.
     *
     * @return whether every running call finished in time
     */
    boolean stopServing(Duration patience) {
        stopping = true;
        long end = System.nanoTime() + patience.toNanos();
        synchronized (inFlight) {
            while (inFlight.get() > 0) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    inFlight.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return true;
    }

    /** {@return the index the node serves} */
    GPHashIndex index() {
        return index;
    }

    /** Refuses a call meant for another cluster or shard, or one that came before the node serves. */
    void checkCall(long clusterId, int calledShard) {
        if (clusterId != manifest.id()) {
            throw new ClusterRefusedException("node " + node + " of cluster " + manifest.name() + " got a call for another "
                    + "cluster (identity " + Long.toHexString(clusterId) + "): the client's manifest is not this cluster's");
        }
        if (calledShard != shard) {
            throw new ClusterRefusedException("node " + node + " serves shard " + shard + ", not shard " + calledShard
                    + ": the client's manifest places shards differently");
        }
        if (!serving) {
            throw new IllegalStateException("node " + node + " (shard " + shard + ") is starting and serves no calls yet");
        }
    }

    /** Runs a part of a batch; a failure of the index partway is reported with the outcomes up to it. */
    PartReply run(PartCall call) {
        int n = call.size;
        checkLength(call.keysLength, (long) n * keySize, "keys");
        Scratch s = scratch.poll();
        if (s == null) {
            s = new Scratch(Batch.create(keySize, valueSize, Math.max(1, n)), new BatchResult(valueSize, Math.max(1, n)));
        }
        try {
            Batch batch = fill(s.batch(), call);
            BatchResult result = s.result();
            String failure = null;
            long t0 = System.nanoTime();
            try {
                index.execute(batch, result);
            } catch (RuntimeException e) {
                failure = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            return reply(result, n, failure, System.nanoTime() - t0);
        } finally {
            scratch.offer(s);
        }
    }

    /** The part's columns into {@code batch}, each value where its operation is. */
    private Batch fill(Batch batch, PartCall call) {
        int n = call.size;
        batch.setSize(n);
        MemorySegment kinds = MemorySegment.ofArray(call.kinds);
        MemorySegment.copy(kinds, 0, batch.kinds(), 0, n);
        MemorySegment.copy(MemorySegment.ofArray(call.keys), 0, batch.keys(), 0, (long) n * keySize);
        MemorySegment values = MemorySegment.ofArray(call.values);
        MemorySegment to = batch.values();
        long v = 0;
        long e = 0;
        boolean conditional = call.expectedLength > 0;
        MemorySegment expected = conditional ? MemorySegment.ofArray(call.expected) : null;
        MemorySegment expectedTo = conditional ? batch.expectedValues() : null;
        for (int i = 0; i < n; i++) {
            int k = call.kinds[i];
            if (k < 0 || k >= HAS_VALUE.length) {
                throw new IllegalArgumentException("operation " + i + " of a part for shard " + shard + " has kind " + k
                        + ", not an OpKind ordinal");
            }
            if (HAS_VALUE[k]) {
                checkRoom(call.valuesLength, v + valueSize, v, "values");
                MemorySegment.copy(values, v, to, (long) i * valueSize, valueSize);
                v += valueSize;
            }
            if (CONDITIONAL[k]) {
                if (!conditional) {
                    throw new IllegalArgumentException("a part for shard " + shard + " has conditional operations and no "
                            + "expected values");
                }
                checkRoom(call.expectedLength, e + valueSize, e, "expected values");
                MemorySegment.copy(expected, e, expectedTo, (long) i * valueSize, valueSize);
                e += valueSize;
            }
        }
        if (v != call.valuesLength || e != call.expectedLength) {
            throw new IllegalArgumentException("a part for shard " + shard + " carries " + call.valuesLength + " value bytes and "
                    + call.expectedLength + " expected-value bytes; its operations need " + v + " and " + e);
        }
        return batch.validate();
    }

    private void checkLength(int length, long needed, String what) {
        if (length != needed) {
            throw new IllegalArgumentException("a part for shard " + shard + " has " + length + " bytes of " + what
                    + ", not " + needed);
        }
    }

    private void checkRoom(int length, long needed, long at, String what) {
        if (length < needed) {
            throw new IllegalArgumentException("a part for shard " + shard + " ends in its " + what + " at byte " + at);
        }
    }

    /** The outcome codes, and the values of the outcomes that carry one, packed. */
    private PartReply reply(BatchResult result, int n, String failure, long runNanos) {
        byte[] codes = new byte[n];
        MemorySegment.copy(result.outcomeCodes(), ValueLayout.JAVA_BYTE, 0, codes, 0, n);
        byte found = Outcome.FOUND.code();
        byte replaced = Outcome.REPLACED.code();
        int carrying = 0;
        for (byte c : codes) {
            if (c == found || c == replaced) {
                carrying++;
            }
        }
        byte[] values = new byte[Math.multiplyExact(carrying, valueSize)];
        if (carrying > 0) {
            MemorySegment from = result.values();
            MemorySegment to = MemorySegment.ofArray(values);
            long at = 0;
            for (int i = 0; i < n; i++) {
                if (codes[i] == found || codes[i] == replaced) {
                    MemorySegment.copy(from, (long) i * valueSize, to, at, valueSize);
                    at += valueSize;
                }
            }
        }
        return new PartReply(codes, values, failure, runNanos);
    }

    /** The index's figures; with {@code sync}, after making everything durable. */
    NodeFigures figures(boolean sync) {
        if (sync) {
            index.sync();
        }
        Engine engine = index.engine();
        return new NodeFigures(index.stats(), engine.geometry(), engine.ordersOperationsOnAKey());
    }

    /** The next chunk of scan {@code scanId}, at most {@code capacity} entries, the scan started on its first call. */
    ScanReply scan(String scanId, int capacity) {
        dropIdleScans();
        Engine engine = index.engine();
        Scan scan = scans.computeIfAbsent(scanId, id -> new Scan(engine.startScan()));
        synchronized (scan) {
            scan.lastUsed = System.nanoTime();
            EntryChunk chunk = new EntryChunk(keySize, valueSize, Math.max(1, Math.min(capacity, MAX_SCAN_CHUNK)));
            if (!scan.state.done()) {
                engine.readEntries(scan.state, chunk);
            }
            int count = chunk.size();
            long keyBytes = (long) count * keySize;
            byte[] entries = new byte[Math.toIntExact(keyBytes + (long) count * valueSize)];
            MemorySegment.copy(chunk.keys(), ValueLayout.JAVA_BYTE, 0, entries, 0, (int) keyBytes);
            MemorySegment.copy(chunk.values(), ValueLayout.JAVA_BYTE, 0, entries, (int) keyBytes, count * valueSize);
            boolean done = scan.state.done();
            if (done) {
                scans.remove(scanId);
            }
            return new ScanReply(count, entries, done);
        }
    }

    private void dropIdleScans() {
        long now = System.nanoTime();
        scans.values().removeIf(s -> now - s.lastUsed > SCAN_IDLE.toNanos());
    }

    @Override
    public String toString() {
        return "node " + node + " (shard " + shard + " of cluster " + manifest.name() + ")";
    }
}
