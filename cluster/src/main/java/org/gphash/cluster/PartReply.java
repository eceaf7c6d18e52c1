package org.gphash.cluster;

import java.io.IOException;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;

/**
 * A part's outcomes: one outcome code per operation, in the part's order, and the values of the
 * operations whose outcome carries one (found by a get, replaced by a put), packed in that order.
 * {@code failure} is set when the node's index stopped partway (a full pool): the codes then say
 * which operations ran, as a batch on one index does.
 */
final class PartReply implements DataSerializable {

    byte[] codes;
    byte[] values;
    String failure;
    /** How long the node's index took to run the part, for the client's breakdown of a batch's time. */
    long runNanos;

    /** For deserialization. */
    public PartReply() {
    }

    PartReply(byte[] codes, byte[] values, String failure, long runNanos) {
        this.codes = codes;
        this.values = values;
        this.failure = failure;
        this.runNanos = runNanos;
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        out.writeByteArray(codes);
        out.writeByteArray(values);
        out.writeString(failure);
        out.writeLong(runNanos);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        codes = in.readByteArray();
        values = in.readByteArray();
        failure = in.readString();
        runNanos = in.readLong();
    }
}
