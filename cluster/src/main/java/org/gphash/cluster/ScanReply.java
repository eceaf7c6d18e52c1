package org.gphash.cluster;

import java.io.IOException;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;

/**
 * A chunk of a shard's entries: {@code count} keys, then their values, in one array; and whether the
 * shard's scan is done.
 */
final class ScanReply implements DataSerializable {

    int count;
    byte[] entries;
    boolean done;

    /** For deserialization. */
    public ScanReply() {
    }

    ScanReply(int count, byte[] entries, boolean done) {
        this.count = count;
        this.entries = entries;
        this.done = done;
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        out.writeInt(count);
        out.writeByteArray(entries);
        out.writeBoolean(done);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        count = in.readInt();
        entries = in.readByteArray();
        done = in.readBoolean();
    }
}
