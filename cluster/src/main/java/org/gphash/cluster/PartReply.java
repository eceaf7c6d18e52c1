package org.gphash.cluster;

import java.io.IOException;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;

/**
 * A part's outcomes: one outcome code per operation, in the part's order, and the values of the
 * operations whose outcome carries one (found by a get, replaced by a put), packed in that order.
 * {@code failure} is set when the node's index stopped partway (a full pool): the codes then say
 * which operations ran, as a batch on one index does. The client reads the columns into pooled
 * arrays ({@link ByteArrays}) and gives them back once merged ({@link #release}).
 */
final class PartReply implements DataSerializable {

    byte[] codes = ByteArrays.NONE;
    int codesLength;
    byte[] values = ByteArrays.NONE;
    int valuesLength;
    String failure;
    /** How long the node's index took to run the part, for the client's breakdown of a batch's time. */
    long runNanos;

    /** For deserialization. */
    public PartReply() {
    }

    PartReply(byte[] codes, byte[] values, String failure, long runNanos) {
        this.codes = codes;
        this.codesLength = codes.length;
        this.values = values;
        this.valuesLength = values.length;
        this.failure = failure;
        this.runNanos = runNanos;
    }

    /** Gives the columns back to the pool; the reply is not used after. */
    void release() {
        ByteArrays.give(codes);
        ByteArrays.give(values);
        codes = values = ByteArrays.NONE;
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        out.writeInt(codesLength);
        out.writeInt(valuesLength);
        out.write(codes, 0, codesLength);
        out.write(values, 0, valuesLength);
        out.writeString(failure);
        out.writeLong(runNanos);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        codesLength = in.readInt();
        valuesLength = in.readInt();
        if (codesLength < 0 || valuesLength < 0) {
            throw new IOException("a reply with a negative length: " + codesLength + ", " + valuesLength);
        }
        codes = ByteArrays.take(codesLength);
        values = ByteArrays.take(valuesLength);
        in.readFully(codes, 0, codesLength);
        in.readFully(values, 0, valuesLength);
        failure = in.readString();
        runNanos = in.readLong();
    }
}
