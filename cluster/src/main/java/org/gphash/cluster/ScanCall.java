package org.gphash.cluster;

import java.io.IOException;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;

/**
 * The next chunk of a scan of one shard: the node keeps the scan's state under {@code scanId}
 * between calls (and drops it when the scan is done, or when the client's scan is abandoned for
 * longer than {@link NodeService#SCAN_IDLE}).
 */
final class ScanCall extends NodeCall<ScanReply> {

    String scanId;
    int capacity;

    /** For deserialization. */
    public ScanCall() {
    }

    ScanCall(long clusterId, int shard, String scanId, int capacity) {
        super(clusterId, shard);
        this.scanId = scanId;
        this.capacity = capacity;
    }

    @Override
    ScanReply runOn(NodeService node) {
        return node.scan(scanId, capacity);
    }

    @Override
    void writeFields(ObjectDataOutput out) throws IOException {
        out.writeString(scanId);
        out.writeInt(capacity);
    }

    @Override
    void readFields(ObjectDataInput in) throws IOException {
        scanId = in.readString();
        capacity = in.readInt();
    }
}
