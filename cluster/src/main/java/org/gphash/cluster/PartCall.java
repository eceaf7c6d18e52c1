package org.gphash.cluster;

import java.io.IOException;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;

/**
 * One shard's part of a batch, in bulk: the operations' kinds and keys as columns, then the values
 * of the operations that carry one and the expected values of the conditional ones, each packed in
 * operation order (a batch of gets sends no value bytes). The node rebuilds a {@code Batch} from it,
 * runs it on its index and answers with a {@link PartReply}.
 *
 * <p>The columns are arrays of {@link ByteArrays}, longer than what counts: each is sent as its
 * length and that many bytes, and read into a pooled array again; {@link #release} gives them back
 * once the message has been serialized (the client) or run (the node).
 */
final class PartCall extends NodeCall<PartReply> {

    int size;
    byte[] kinds = ByteArrays.NONE;
    byte[] keys = ByteArrays.NONE;
    int keysLength;
    byte[] values = ByteArrays.NONE;
    int valuesLength;
    byte[] expected = ByteArrays.NONE;
    int expectedLength;

    /** For deserialization. */
    public PartCall() {
    }

    /** A part of {@code size} operations with columns of these lengths, its arrays taken from the pool. */
    PartCall(long clusterId, int shard, int size, int keysLength, int valuesLength, int expectedLength) {
        super(clusterId, shard);
        this.size = size;
        this.keysLength = keysLength;
        this.valuesLength = valuesLength;
        this.expectedLength = expectedLength;
        this.kinds = ByteArrays.take(size);
        this.keys = ByteArrays.take(keysLength);
        this.values = ByteArrays.take(valuesLength);
        this.expected = ByteArrays.take(expectedLength);
    }

    /** Gives the columns back to the pool; the part is not used after. */
    void release() {
        ByteArrays.give(kinds);
        ByteArrays.give(keys);
        ByteArrays.give(values);
        ByteArrays.give(expected);
        kinds = keys = values = expected = ByteArrays.NONE;
    }

    @Override
    PartReply runOn(NodeService node) {
        try {
            return node.run(this);
        } finally {
            release();
        }
    }

    @Override
    void writeFields(ObjectDataOutput out) throws IOException {
        out.writeInt(size);
        out.writeInt(keysLength);
        out.writeInt(valuesLength);
        out.writeInt(expectedLength);
        out.write(kinds, 0, size);
        out.write(keys, 0, keysLength);
        out.write(values, 0, valuesLength);
        out.write(expected, 0, expectedLength);
    }

    @Override
    void readFields(ObjectDataInput in) throws IOException {
        size = in.readInt();
        keysLength = in.readInt();
        valuesLength = in.readInt();
        expectedLength = in.readInt();
        if (size < 0 || keysLength < 0 || valuesLength < 0 || expectedLength < 0) {
            throw new IOException("a part with a negative length: " + size + ", " + keysLength + ", " + valuesLength + ", "
                    + expectedLength);
        }
        kinds = ByteArrays.take(size);
        keys = ByteArrays.take(keysLength);
        values = ByteArrays.take(valuesLength);
        expected = ByteArrays.take(expectedLength);
        in.readFully(kinds, 0, size);
        in.readFully(keys, 0, keysLength);
        in.readFully(values, 0, valuesLength);
        in.readFully(expected, 0, expectedLength);
    }
}
