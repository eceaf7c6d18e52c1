package org.gphash.cluster;

import java.io.IOException;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;
import org.gphash.Geometry;
import org.gphash.IndexStats;

/**
 * A node's answer to {@link FiguresCall}: its index's figures (a serializable record), the geometry
 * its shard pools have, and whether its engine applies a batch's operations on one key in order.
 */
final class NodeFigures implements DataSerializable {

    IndexStats stats;
    int[] geometry;
    boolean ordersOperationsOnAKey;

    /** For deserialization. */
    public NodeFigures() {
    }

    NodeFigures(IndexStats stats, Geometry g, boolean ordersOperationsOnAKey) {
        this.stats = stats;
        this.geometry = new int[] {g.levels(), g.hashes(), g.slotsPerBucket(), g.keySize(), g.valueSize(), g.itemChecksums() ? 1 : 0};
        this.ordersOperationsOnAKey = ordersOperationsOnAKey;
    }

    /** {@return the shard pools' geometry} */
    Geometry geometry() {
        return new Geometry(geometry[0], geometry[1], geometry[2], geometry[3], geometry[4], geometry[5] != 0);
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        out.writeObject(stats);
        out.writeIntArray(geometry);
        out.writeBoolean(ordersOperationsOnAKey);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        stats = in.readObject();
        geometry = in.readIntArray();
        ordersOperationsOnAKey = in.readBoolean();
    }
}
