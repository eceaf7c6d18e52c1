package org.gphash.cluster;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.EntryChunk;
import org.gphash.Geometry;
import org.gphash.IndexStats;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.RecoveryReport;
import org.gphash.shard.ShardFunction;
import org.gphash.shard.ShardTotals;
import org.gphash.spi.Engine;
import org.gphash.spi.ScanState;

/**
 * The client's engine of a cluster index: the {@link Engine} contract over the nodes of a cluster,
 * so that {@code GPHashIndex}, its typed map and its cursors work on a cluster as on one host.
 *
 * <p>A batch is split by shard ({@link ShardFunction} of the manifest's seed, as the sharded index on
 * one host splits it), each shard's part is sent to its node as one message with its columns in bulk
 * ({@link PartCall}), the parts run at once on their nodes, and the outcomes are put back in the
 * caller's order. The split keeps each key's operations in batch order in one message, and a node
 * runs a message as a batch, so what a node's engine promises about one key's operations holds for
 * the cluster. A large part travels as several messages of disjoint keys ({@link MessageSplit#MESSAGE_OPS}).
 *
 * <p>When a shard's node is down, or fails while running its part, the other parts still run to the
 * end, and the batch then throws {@link ShardsUnavailableException} naming the shards whose parts did
 * not run; their operations stay {@code NOT_APPLIED} in the caller's result. A single call whose shard
 * is down throws the same exception.
 */
final class ClusterEngine implements Engine {



    private final ClusterManifest manifest;
    private final NodeTransport transport;
    private final ShardFunction function;
    private final int shards;
    private final int keySize;
    private final int valueSize;
    private final Geometry geometry;
    private final boolean ordersOperationsOnAKey;
    private final int messageOps;
    /**
     * The client's own threads for the split's ranges and the merges of replies: not the common pool,
     * which the application's tasks share (a merge queued behind them would hold the batch).
     */
    private final ExecutorService workers;
    private final LongAdder splitNanos = new LongAdder();
    private final LongAdder remoteNanos = new LongAdder();
    private final LongAdder mergeNanos = new LongAdder();
    private final LongAdder nodeRunNanos = new LongAdder();
    private final LongAdder batches = new LongAdder();

    /**
     * An engine over the cluster {@code transport} reaches; asks the nodes up for their geometry.
     *
     * @throws ShardsUnavailableException when no node answers
     */
    ClusterEngine(ClusterManifest manifest, NodeTransport transport) {
        this(manifest, transport, MessageSplit.MESSAGE_OPS);
    }

    /** With messages of at most {@code messageOps} operations (GPU nodes run larger ones better; tests split small batches into many). */
    ClusterEngine(ClusterManifest manifest, NodeTransport transport, int messageOps) {
        this.messageOps = messageOps;
        this.manifest = manifest;
        AtomicInteger threads = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(Math.min(MessageSplit.MAX_RANGES, Runtime.getRuntime().availableProcessors()), r -> {
            Thread t = new Thread(r, "gphash-cluster-client-" + threads.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
        this.transport = transport;
        this.function = manifest.function();
        this.shards = manifest.shards();
        this.keySize = manifest.keySize();
        this.valueSize = manifest.valueSize();
        NodeFigures any = null;
        boolean ordered = true;
        Throwable last = null;
        for (Object answer : askAll(false)) {
            if (answer instanceof NodeFigures f) {
                any = any == null ? f : any;
                ordered &= f.ordersOperationsOnAKey;
            } else {
                last = (Throwable) answer;
            }
        }
        if (any == null) {
            throw new ShardsUnavailableException(manifest.shardNumbers(), "no node of cluster " + manifest.name() + " answered",
                    null, last);
        }
        Geometry g = any.geometry();
        if (g.keySize() != keySize || g.valueSize() != valueSize) {
            throw new ClusterRefusedException("the nodes of cluster " + manifest.name() + " hold " + g.keySize() + "-byte keys and "
                    + g.valueSize() + "-byte values; the manifest says " + keySize + " and " + valueSize);
        }
        this.geometry = g;
        this.ordersOperationsOnAKey = ordered;
    }

    /** {@return the cluster's manifest} */
    ClusterManifest manifest() {
        return manifest;
    }

    @Override
    public Geometry geometry() {
        return geometry;
    }

    // ------------------------------------------------------------------ batches

    @Override
    public void execute(Batch batch, BatchResult result) {
        int n = batch.size();
        result.reset(n);
        if (n == 0) {
            return;
        }
        batch.validate();
        long t0 = System.nanoTime();
        MessageSplit split = MessageSplit.of(batch, function, messageOps, manifest.id(), workers);
        long t1 = System.nanoTime();
        int messages = split.parts().length;
        // Each reply is merged as it arrives, on the client's threads: the merges of a batch's messages
        // run at once (their positions are disjoint) and beside the wait for the other replies.
        @SuppressWarnings("unchecked")
        CompletableFuture<PartReply>[] replies = new CompletableFuture[messages];
        for (int p = 0; p < messages; p++) {
            if (split.parts()[p] != null) {
                int[] positions = split.positions()[p];
                try {
                    replies[p] = transport.call(split.shardOf()[p], split.parts()[p]).thenApplyAsync(reply -> {
                        long m0 = System.nanoTime();
                        mergeBack(reply, positions, result);
                        mergeNanos.add(System.nanoTime() - m0);
                        return reply;
                    }, workers);
                } finally {
                    // A transport serializes a call before it returns (Hazelcast's client does, into
                    // the message it sends): the columns are free for the next batch's split.
                    split.parts()[p].release();
                }
            }
        }
        List<Integer> failed = new ArrayList<>();
        StringBuilder why = new StringBuilder();
        Throwable first = null;
        long[] runs = new long[shards];
        for (int p = 0; p < messages; p++) {
            if (replies[p] == null) {
                continue;
            }
            int s = split.shardOf()[p];
            PartReply reply;
            try {
                reply = replies[p].join();
            } catch (CompletionException | CancellationException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                if (!failed.contains(s)) {
                    failed.add(s);
                    why.append(failed.size() > 1 ? "; " : "").append(describe(s, cause));
                }
                first = first == null ? cause : first;
                continue;
            }
            runs[s] += reply.runNanos;
            reply.release();
            if (reply.failure != null && !failed.contains(s)) {
                failed.add(s);
                why.append(failed.size() > 1 ? "; " : "").append("node ").append(nodeName(s)).append(" stopped its part: ")
                        .append(reply.failure);
            }
        }
        long busiest = 0;
        for (long r : runs) {
            busiest = Math.max(busiest, r);
        }
        splitNanos.add(t1 - t0);
        remoteNanos.add(System.nanoTime() - t1);
        nodeRunNanos.add(busiest);
        batches.increment();
        if (!failed.isEmpty()) {
            failed.sort(null);
            throw new ShardsUnavailableException(failed, why.toString(), result, first);
        }
    }

    private String nodeName(int shard) {
        return manifest.nodes().get(shard).name();
    }

    private String describe(int shard, Throwable cause) {
        ClusterManifest.Node node = manifest.nodes().get(shard);
        return "shard " + shard + " (node " + node.name() + " at " + node.address() + "): "
                + (cause instanceof NodeUnavailableException ? cause.getMessage() : cause.getClass().getSimpleName() + ": "
                + cause.getMessage());
    }

    /** A part's outcomes to their operations' positions, and the values they carry. */
    private void mergeBack(PartReply reply, int[] positions, BatchResult result) {
        MemorySegment codes = result.outcomeCodes();
        MemorySegment values = result.values();
        MemorySegment packed = MemorySegment.ofArray(reply.values);
        byte found = Outcome.FOUND.code();
        byte replaced = Outcome.REPLACED.code();
        int vs = valueSize;
        long at = 0;
        int m = Math.min(positions.length, reply.codesLength);
        for (int j = 0; j < m; j++) {
            int i = positions[j];
            byte code = reply.codes[j];
            codes.set(ValueLayout.JAVA_BYTE, i, code);
            if ((code == found || code == replaced) && at + vs <= reply.valuesLength) {
                MemorySegment.copy(packed, at, values, (long) i * vs, vs);
                at += vs;
            }
        }
    }

    /**
     * Where the batches' time went since the last reset, summed over batches: splitting them into
     * messages; from sending them to the last reply merged (the network both ways, serialization,
     * queueing, the nodes' runs, the merges); the busiest node's time in its index; the merges' own
     * time (summed over messages: they run at once, beside the wait); and the number of batches. The nodes' figure is the busiest node's: the sum of its
     * messages' runs on its index (they run at once, so it may exceed the wait).
     *
     * @param reset whether to start counting again
     * @return split, remote, busiest node's index time and merge nanoseconds, and batches
     */
    long[] stageNanos(boolean reset) {
        LongAdder[] all = {splitNanos, remoteNanos, nodeRunNanos, mergeNanos, batches};
        long[] v = new long[all.length];
        for (int i = 0; i < all.length; i++) {
            v[i] = reset ? all[i].sumThenReset() : all[i].sum();
        }
        return v;
    }

    /**
     * What the transport alone costs a batch of {@code batchOps} operations: the messages its split
     * would send (per node, as many as {@link #execute} makes, its share of the operations, at
     * {@code bytesPerOpOut} bytes each), all at once, each answered with {@code bytesPerOpBack} bytes
     * an operation and nothing run; waits for all.
     *
     * @return the nanoseconds it took
     */
    long echo(int batchOps, int bytesPerOpOut, int bytesPerOpBack) {
        int perShard = MessageSplit.messagesPerShard(batchOps, shards, messageOps);
        int ops = (int) (((long) batchOps + (long) shards * perShard - 1) / ((long) shards * perShard));
        List<CompletableFuture<byte[]>> all = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int s = 0; s < shards; s++) {
            for (int m = 0; m < perShard; m++) {
                all.add(transport.call(s, new EchoCall(manifest.id(), s, new byte[Math.multiplyExact(ops, bytesPerOpOut)],
                        Math.multiplyExact(ops, bytesPerOpBack))));
            }
        }
        all.forEach(CompletableFuture::join);
        return System.nanoTime() - t0;
    }

    // ------------------------------------------------------------------ single calls

    /** One operation as a part of one: a message to its shard's node. */
    private Outcome one(OpKind kind, MemorySegment key, MemorySegment value, MemorySegment expected, MemorySegment valueOut) {
        int s = function.shardOf(key, 0, keySize);
        int values = kind.hasValue() ? valueSize : 0;
        int expectedBytes = kind.isConditional() ? valueSize : 0;
        PartCall call = new PartCall(manifest.id(), s, 1, keySize, values, expectedBytes);
        call.kinds[0] = (byte) kind.ordinal();
        MemorySegment.copy(key, ValueLayout.JAVA_BYTE, 0, call.keys, 0, keySize);
        if (values > 0) {
            MemorySegment.copy(value, ValueLayout.JAVA_BYTE, 0, call.values, 0, values);
        }
        if (expectedBytes > 0) {
            MemorySegment.copy(expected, ValueLayout.JAVA_BYTE, 0, call.expected, 0, expectedBytes);
        }
        PartReply reply;
        try {
            CompletableFuture<PartReply> sent = transport.call(s, call);
            call.release();
            reply = sent.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new ShardsUnavailableException(List.of(s), describe(s, cause), null, cause);
        }
        if (reply.failure != null) {
            throw new ShardsUnavailableException(List.of(s), "node " + nodeName(s) + ": " + reply.failure, null, null);
        }
        Outcome outcome = Outcome.ofCode(reply.codes[0]);
        if (valueOut != null && reply.valuesLength == valueSize) {
            MemorySegment.copy(MemorySegment.ofArray(reply.values), 0, valueOut, 0, valueSize);
        }
        reply.release();
        return outcome;
    }

    @Override
    public Outcome get(MemorySegment key, MemorySegment valueOut) {
        return one(OpKind.GET, key, null, null, valueOut);
    }

    @Override
    public Outcome put(MemorySegment key, MemorySegment value) {
        return one(OpKind.PUT, key, value, null, null);
    }

    @Override
    public Outcome insert(MemorySegment key, MemorySegment value) {
        return one(OpKind.INSERT, key, value, null, null);
    }

    @Override
    public Outcome update(MemorySegment key, MemorySegment value) {
        return one(OpKind.UPDATE, key, value, null, null);
    }

    @Override
    public Outcome delete(MemorySegment key) {
        return one(OpKind.DELETE, key, null, null, null);
    }

    @Override
    public Outcome compareAndSet(MemorySegment key, MemorySegment expected, MemorySegment value) {
        return one(OpKind.COMPARE_AND_SET, key, value, expected, null);
    }

    @Override
    public Outcome compareAndDelete(MemorySegment key, MemorySegment expected) {
        return one(OpKind.COMPARE_AND_DELETE, key, null, expected, null);
    }

    @Override
    public boolean ordersOperationsOnAKey() {
        return ordersOperationsOnAKey;
    }

    // ------------------------------------------------------------------ figures, scans, the rest

    /** Asks every node for its figures at once (with {@code sync}, after it made what it holds durable); per shard, its {@link NodeFigures} or the failure. */
    private List<Object> askAll(boolean sync) {
        List<CompletableFuture<NodeFigures>> all = new ArrayList<>();
        for (int s = 0; s < shards; s++) {
            all.add(transport.call(s, new FiguresCall(manifest.id(), s, sync)));
        }
        List<Object> out = new ArrayList<>();
        for (CompletableFuture<NodeFigures> answer : all) {
            try {
                out.add(answer.join());
            } catch (CompletionException e) {
                out.add(e.getCause() != null ? e.getCause() : e);
            }
        }
        return out;
    }

    /** Every node's figures, in shard order; throws naming the shards whose nodes did not answer. */
    private List<NodeFigures> figures(boolean sync) {
        List<NodeFigures> out = new ArrayList<>();
        List<Integer> failed = new ArrayList<>();
        StringBuilder why = new StringBuilder();
        Throwable first = null;
        List<Object> answers = askAll(sync);
        for (int s = 0; s < shards; s++) {
            if (answers.get(s) instanceof NodeFigures f) {
                out.add(f);
            } else {
                Throwable cause = (Throwable) answers.get(s);
                failed.add(s);
                why.append(failed.size() > 1 ? "; " : "").append(describe(s, cause));
                first = first == null ? cause : first;
            }
        }
        if (!failed.isEmpty()) {
            throw new ShardsUnavailableException(failed, why.toString(), null, first);
        }
        return out;
    }

    /** Each shard's figures, or the reason its node did not answer, in shard order: for {@code gphash cluster status}. */
    List<Object> shardStatsOrReasons() {
        List<Object> answers = askAll(false);
        List<Object> out = new ArrayList<>();
        for (int s = 0; s < shards; s++) {
            out.add(answers.get(s) instanceof NodeFigures f ? f.stats : describe(s, (Throwable) answers.get(s)));
        }
        return out;
    }

    @Override
    public List<IndexStats> shardStats() {
        List<IndexStats> all = new ArrayList<>();
        figures(false).forEach(f -> all.add(f.stats));
        return all;
    }

    @Override
    public IndexStats stats() {
        List<IndexStats> all = shardStats();
        List<RecoveryReport> recoveries = new ArrayList<>();
        all.forEach(s -> recoveries.add(s.lastRecovery()));
        return ShardTotals.stats(all, ShardTotals.recovery(recoveries, Duration.ZERO));
    }

    @Override
    public RecoveryReport lastRecovery() {
        List<RecoveryReport> recoveries = new ArrayList<>();
        shardStats().forEach(s -> recoveries.add(s.lastRecovery()));
        return ShardTotals.recovery(recoveries, Duration.ZERO);
    }

    @Override
    public void sync() {
        figures(true);
    }

    /** Where a scan of the cluster stands: a shard, the node's scan of it, whether that is done. */
    private static final class Scan implements ScanState {
        final ClusterEngine owner;
        int shard;
        String id = UUID.randomUUID().toString();
        boolean shardDone;

        Scan(ClusterEngine owner) {
            this.owner = owner;
        }

        @Override
        public boolean done() {
            return shardDone && shard == owner.shards - 1;
        }
    }

    @Override
    public ScanState startScan() {
        return new Scan(this);
    }

    @Override
    public void readEntries(ScanState state, EntryChunk chunk) {
        if (!(state instanceof Scan scan) || scan.owner != this) {
            throw new IllegalArgumentException("a scan state made by another engine (" + state + ") was passed to cluster "
                    + manifest.name());
        }
        if (scan.shardDone && scan.shard + 1 < shards) {
            scan.shard++;
            scan.id = UUID.randomUUID().toString();
            scan.shardDone = false;
        }
        chunk.clear();
        int room = chunk.capacity();
        ScanReply reply;
        try {
            reply = transport.call(scan.shard, new ScanCall(manifest.id(), scan.shard, scan.id, Math.max(1, room))).join();
        } catch (CompletionException e) {
            throw new ShardsUnavailableException(List.of(scan.shard), describe(scan.shard, e.getCause()), null, e.getCause());
        }
        MemorySegment entries = MemorySegment.ofArray(reply.entries);
        long valuesAt = (long) reply.count * keySize;
        for (int i = 0; i < reply.count; i++) {
            chunk.add(entries, (long) i * keySize, valuesAt + (long) i * valueSize);
        }
        scan.shardDone = reply.done;
    }

    @Override
    public void snapshot(Path target) {
        throw new UnsupportedOperationException("a cluster index has no one directory to copy: snapshot each node's "
                + "directory on its host ('gphash snapshot DIR TARGET' while the node runs, or a copy while it is stopped)");
    }

    @Override
    public void close() {
        try {
            transport.close();
        } finally {
            workers.shutdown();
        }
    }

    @Override
    public void abandon() {
        close();
    }

    @Override
    public String toString() {
        return "cluster " + manifest.name() + " (" + shards + " shards)";
    }
}
