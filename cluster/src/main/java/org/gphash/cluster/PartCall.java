package org.gphash.cluster;

import java.io.IOException;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;

/**
 * One shard's part of a batch, in bulk: the operations' kinds and keys as columns, then the values
 * of the operations that carry one and the expected values of the conditional ones, each packed in
 * operation order (a batch of gets sends no value bytes). The node rebuilds a {@code Batch} from it,
 * runs it on its index and answers with a {@link PartReply}.
 */
final class PartCall extends NodeCall<PartReply> {

    int size;
    byte[] kinds;
    byte[] keys;
    byte[] values;
    byte[] expected;

    /** For deserialization. */
    public PartCall() {
    }

    PartCall(long clusterId, int shard, int size, byte[] kinds, byte[] keys, byte[] values, byte[] expected) {
        super(clusterId, shard);
        this.size = size;
        this.kinds = kinds;
        this.keys = keys;
        this.values = values;
        this.expected = expected;
    }

    @Override
    PartReply runOn(NodeService node) {
        return node.run(this);
    }

    @Override
    void writeFields(ObjectDataOutput out) throws IOException {
        out.writeInt(size);
        out.writeByteArray(kinds);
        out.writeByteArray(keys);
        out.writeByteArray(values);
        out.writeByteArray(expected);
    }

    @Override
    void readFields(ObjectDataInput in) throws IOException {
        size = in.readInt();
        kinds = in.readByteArray();
        keys = in.readByteArray();
        values = in.readByteArray();
        expected = in.readByteArray();
    }
}
