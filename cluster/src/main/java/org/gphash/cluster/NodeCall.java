package org.gphash.cluster;

import java.io.IOException;
import java.util.concurrent.Callable;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceAware;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;

/**
 * What a client asks of the node serving one shard: a message that Hazelcast's executor runs on
 * that node's member, where it finds the node's {@link NodeService} in the member's user context.
 * Every call names the cluster and the shard it is meant for, and the node refuses one meant for
 * another (a client with another manifest, or a member that is not this shard's node).
 *
 * @param <R> the reply
 */
abstract class NodeCall<R> implements Callable<R>, DataSerializable, HazelcastInstanceAware {

    long clusterId;
    int shard;
    private transient HazelcastInstance member;

    /** For deserialization. */
    NodeCall() {
    }

    NodeCall(long clusterId, int shard) {
        this.clusterId = clusterId;
        this.shard = shard;
    }

    @Override
    public void setHazelcastInstance(HazelcastInstance instance) {
        this.member = instance;
    }

    @Override
    public final R call() {
        Object service = member.getUserContext().get(NodeService.CONTEXT_KEY);
        if (!(service instanceof NodeService node)) {
            throw new IllegalStateException("member " + member.getCluster().getLocalMember().getAddress()
                    + " serves no shard (not a gphash node, or not started yet)");
        }
        return node.serve(this);
    }

    /** Runs the call on the node that serves its shard (also from tests, without a member). */
    abstract R runOn(NodeService node);

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        out.writeLong(clusterId);
        out.writeInt(shard);
        writeFields(out);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        clusterId = in.readLong();
        shard = in.readInt();
        readFields(in);
    }

    /** Writes the call's own fields. */
    abstract void writeFields(ObjectDataOutput out) throws IOException;

    /** Reads the call's own fields. */
    abstract void readFields(ObjectDataInput in) throws IOException;
}
