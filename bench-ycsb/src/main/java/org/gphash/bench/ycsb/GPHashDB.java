package org.gphash.bench.ycsb;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.Vector;

import org.gphash.GPHashIndex;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * The YCSB binding: YCSB's own {@code site.ycsb.Client} drives the GPHash engine through this
 * class ({@code -db org.gphash.bench.ycsb.GPHashDB}). Keys and records are mapped as
 * {@link RecordCodec} describes; the table name is ignored (one pool is one table). Scans are not
 * supported (a hash index has no order: NOT_IMPLEMENTED, as the paper leaves out workload E).
 *
 * <p>Properties: {@code gphash.path} (default /dev/shm/gphash-ycsb.pool; created if missing),
 * {@code gphash.keysize} (8), {@code gphash.poolformat} (a new pool's format: 2, or 3 for values of any
 * length, records then stored at their own length on the CPU backend), {@code gphash.valuesize} (default: the workload's largest record, at least
 * 128: {@link RecordCodec#valueSizeFor}; 1,104 for YCSB's standard ten fields of 100 bytes),
 * {@code gphash.backend} (cpu|gpu),
 * {@code gphash.initialcapacity} (default: recordcount), {@code gphash.coalescing} (auto|on|off: whether
 * the client threads' single calls are merged into batches; auto = the builder's default),
 * {@code gphash.linger.us} (0), {@code gphash.maxbatch} (65536) and {@code gphash.hostcache.mb} (the
 * host read cache's size; default an eighth of the heap, at most 256; 0: none), {@code gphash.adaptive}
 * (false; true: the coalescer's adaptive wait), {@code gphash.spin.us} (50: how long callers and the
 * coalescer spin before parking; 0: not at all). {@code gphash.cluster} names a cluster's manifest: the
 * client threads then share one client of that cluster ({@code GPHashCluster}) instead of a pool
 * of their own (path, sizes, backend and capacity are the cluster's; coalescing applies, off by
 * default).
 */
public final class GPHashDB extends DB {

    private GPHashIndex index;
    private RecordCodec codec;

    @Override
    public void init() throws DBException {
        try {
            index = SharedIndex.acquire(getProperties());
        } catch (RuntimeException e) {
            throw new DBException("gphash: cannot open the pool: " + e.getMessage(), e);
        }
        codec = new RecordCodec(index.keySize(), index.valueSize(), index.valueLengths());
    }

    @Override
    public void cleanup() {
        if (index != null) {
            index = null;
            SharedIndex.release();
        }
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        byte[] k = codec.key(key);
        if (k == null) {
            return Status.BAD_REQUEST;
        }
        byte[] v = index.get(k);
        if (v == null) {
            return Status.NOT_FOUND;
        }
        for (Map.Entry<String, byte[]> e : codec.decode(v).entrySet()) {
            if (fields == null || fields.contains(e.getKey())) {
                result.put(e.getKey(), new ByteArrayByteIterator(e.getValue()));
            }
        }
        return Status.OK;
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        return Status.NOT_IMPLEMENTED;
    }

    /**
     * Replaces the given fields, keeping the others (YCSB's update semantics). Where the record keeps
     * fields the update does not name, the merged record is written by compare-and-set on the record
     * read, again until no other client changed it meanwhile, so that two clients updating different
     * fields of one record lose neither update (YCSB's standard records have ten fields, and an
     * update names one). An update that names every field the record has is a plain update.
     */
    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        byte[] k = codec.key(key);
        if (k == null) {
            return Status.BAD_REQUEST;
        }
        Map<String, byte[]> fields = new HashMap<>();
        values.forEach((name, it) -> fields.put(name, it.toArray()));
        for (;;) {
            byte[] current = index.get(k);
            if (current == null) {
                return Status.NOT_FOUND;
            }
            Map<String, byte[]> record = codec.decode(current);
            boolean replacesAll = fields.keySet().containsAll(record.keySet());
            record.putAll(fields);
            byte[] v = codec.encode(record);
            if (v == null) {
                return Status.BAD_REQUEST;
            }
            if (replacesAll) {
                return index.update(k, v) ? Status.OK : Status.NOT_FOUND;
            }
            if (index.compareAndSet(k, current, v)) {
                return Status.OK;
            }
        }
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        byte[] k = codec.key(key);
        Map<String, byte[]> record = new HashMap<>();
        values.forEach((name, it) -> record.put(name, it.toArray()));
        byte[] v = codec.encode(record);
        if (k == null || v == null) {
            return Status.BAD_REQUEST;
        }
        // put, not insert: YCSB's insert of an existing key overwrites it in every binding.
        index.put(k, v);
        return Status.OK;
    }

    @Override
    public Status delete(String table, String key) {
        byte[] k = codec.key(key);
        if (k == null) {
            return Status.BAD_REQUEST;
        }
        return index.delete(k) ? Status.OK : Status.NOT_FOUND;
    }
}
