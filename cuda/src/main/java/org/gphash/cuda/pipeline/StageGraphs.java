package org.gphash.cuda.pipeline;

import static jcuda.driver.JCudaDriver.cuGraphDestroy;
import static jcuda.driver.JCudaDriver.cuGraphExecDestroy;
import static jcuda.driver.JCudaDriver.cuGraphInstantiate;
import static jcuda.driver.JCudaDriver.cuGraphLaunch;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUstream;
import org.gphash.cuda.runtime.CudaRuntime;

/**
 * The stage launches of a batch, captured once per shape and parameters as a CUDA graph and replayed
 * with one launch. A batch's launches depend only on its capacity class, what it does and where things
 * are (its sizes are read from device memory), and the host's launch overhead, not the GPU, is what
 * limits small batches (docs/PERFORMANCE.md, "the GPHash artifact's workload"). A graph refers to
 * buffers by address: whoever moves a buffer drops the graphs. While stages are profiled they are
 * launched one by one instead, each between its own events. Not thread-safe.
 */
final class StageGraphs implements AutoCloseable {

    private static final int MAX_GRAPHS = 32;

    /**
     * What a graph depends on: the batch's shape, and every parameter struct its launches were given;
     * {@code blocks}: the grid of a one-launch batch (0 for the staged pipeline).
     */
    record Key(long capacity, boolean reads, boolean writes, int mode, int blocks, boolean cacheOn, ByteBuffer params) {
    }

    private record Graph(CUgraph graph, CUgraphExec exec) {
    }

    private final CudaRuntime cuda;
    private final Map<Key, Graph> graphs = new HashMap<>();
    private long captures;

    StageGraphs(CudaRuntime cuda) {
        this.cuda = cuda;
    }

    /** Launches the graph of {@code key} on {@code stream}, capturing what {@code queue} queues the first time. */
    void launch(Key key, CUstream stream, Runnable queue) {
        Graph g = graphs.get(key);
        if (g == null) {
            if (graphs.size() >= MAX_GRAPHS) {
                drop();
            }
            CUgraph graph = new CUgraph();
            cuda.capture(stream, queue, graph);
            CUgraphExec exec = new CUgraphExec();
            cuGraphInstantiate(exec, graph, 0);
            g = new Graph(graph, exec);
            graphs.put(key, g);
            captures++;
        }
        cuGraphLaunch(g.exec(), stream);
    }

    /** Graphs captured so far (each a new shape or new buffers). */
    long captures() {
        return captures;
    }

    /** The parameter structs of a batch's launches as one key part (BktCache's clock left out: it changes every batch). */
    static ByteBuffer params(byte[] table, byte[] mirrorTable, byte[] cache, byte[] heap, byte[] pipe) {
        byte[] all = new byte[table.length + mirrorTable.length + cache.length + heap.length + pipe.length];
        int at = 0;
        for (byte[] b : new byte[][] {table, mirrorTable, cache, heap, pipe}) {
            System.arraycopy(b, 0, all, at, b.length);
            at += b.length;
        }
        // CacheParams.clock (field 10): the pipeline reads the clock from its batch descriptor instead.
        int clock = table.length + mirrorTable.length + 10 * 8;
        Arrays.fill(all, clock, clock + 8, (byte) 0);
        return ByteBuffer.wrap(all);
    }

    /** Drops every graph (buffers they refer to moved). */
    void drop() {
        for (Graph g : graphs.values()) {
            cuGraphExecDestroy(g.exec());
            cuGraphDestroy(g.graph());
        }
        graphs.clear();
    }

    @Override
    public void close() {
        drop();
    }
}
