package org.gphash.cluster;

import java.io.IOException;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;

/** Asks a node for its index's figures and geometry; with {@code sync}, first makes everything it holds durable. */
final class FiguresCall extends NodeCall<NodeFigures> {

    boolean sync;

    /** For deserialization. */
    public FiguresCall() {
    }

    FiguresCall(long clusterId, int shard, boolean sync) {
        super(clusterId, shard);
        this.sync = sync;
    }

    @Override
    NodeFigures runOn(NodeService node) {
        return node.figures(sync);
    }

    @Override
    void writeFields(ObjectDataOutput out) throws IOException {
        out.writeBoolean(sync);
    }

    @Override
    void readFields(ObjectDataInput in) throws IOException {
        sync = in.readBoolean();
    }
}
