package org.gphash.cluster;

import java.io.IOException;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;

/**
 * A message of some bytes that the node answers with some bytes, touching nothing: what the transport
 * alone (serialization, copies, the network stack, Hazelcast's executor) costs for a part of that
 * size, for the cluster benchmark's breakdown.
 */
final class EchoCall extends NodeCall<byte[]> {

    byte[] payload;
    int replyBytes;

    /** For deserialization. */
    public EchoCall() {
    }

    EchoCall(long clusterId, int shard, byte[] payload, int replyBytes) {
        super(clusterId, shard);
        this.payload = payload;
        this.replyBytes = replyBytes;
    }

    @Override
    byte[] runOn(NodeService node) {
        return new byte[replyBytes];
    }

    @Override
    void writeFields(ObjectDataOutput out) throws IOException {
        out.writeByteArray(payload);
        out.writeInt(replyBytes);
    }

    @Override
    void readFields(ObjectDataInput in) throws IOException {
        payload = in.readByteArray();
        replyBytes = in.readInt();
    }
}
