package org.gphash.bench;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.OpKind;
import org.gphash.Outcome;
import org.lmdbjava.Dbi;
import org.lmdbjava.DbiFlags;
import org.lmdbjava.Env;
import org.lmdbjava.PutFlags;
import org.lmdbjava.Txn;

/**
 * LMDB through lmdbjava (which bundles liblmdb): a persisted, memory-mapped B+tree store that
 * Java applications use today. A batch is one transaction, which is how a batch API maps onto
 * LMDB: a read-only batch runs in a read transaction (readers run in parallel), a batch with any
 * write in one write transaction committed at the end (LMDB allows one writer at a time; the
 * commit is durable, with LMDB's default fsync). So LMDB persists per batch where GPHash persists
 * per operation: a difference in LMDB's favour, reported with the results.
 *
 * <p>Needs {@code --add-opens java.base/java.nio=ALL-UNNAMED} (lmdbjava reads a direct buffer's
 * address field); the launcher and the tests pass it.
 */
public final class LmdbStore implements StoreUnderTest {

    private final Env<ByteBuffer> env;
    private final Dbi<ByteBuffer> db;
    private final int keySize;
    private final int valueSize;
    private final ThreadLocal<Buffers> buffers;

    public LmdbStore(StoreConfig config) throws IOException {
        this.keySize = config.keySize();
        this.valueSize = config.valueSize();
        Path dir = config.directory().resolve("lmdb");
        Files.createDirectories(dir);
        // The map is reserved address space, not memory: size it generously (B+tree pages and
        // copy-on-write headroom, about 4x the raw data), LMDB cannot grow it while open.
        long raw = Math.max(1, config.expectedItems()) * (keySize + valueSize + 16L);
        long mapSize = Math.max(64L << 20, raw * 4);
        this.env = Env.create().setMapSize(mapSize).setMaxDbs(1).setMaxReaders(1024).open(dir.toFile());
        this.db = env.openDbi("bench", DbiFlags.MDB_CREATE);
        this.buffers = ThreadLocal.withInitial(() -> new Buffers(keySize, valueSize));
    }

    @Override
    public String name() {
        return "lmdb";
    }

    @Override
    public String description() {
        return "LMDB (lmdbjava 0.9.1), one transaction per batch, durable commit per batch";
    }

    @Override
    public void execute(OpBatch batch, OpResults results) {
        boolean readOnly = true;
        for (int i = 0; i < batch.size() && readOnly; i++) {
            readOnly = batch.kind(i) == OpKind.GET;
        }
        results.reset(batch.size());
        Buffers b = buffers.get();
        try (Txn<ByteBuffer> txn = readOnly ? env.txnRead() : env.txnWrite()) {
            for (int i = 0; i < batch.size(); i++) {
                apply(txn, batch, i, b, results);
            }
            if (!readOnly) {
                txn.commit();
            }
        }
    }

    private void apply(Txn<ByteBuffer> txn, OpBatch batch, int i, Buffers b, OpResults results) {
        b.key.clear();
        b.key.put(batch.keys().asSlice((long) i * keySize, keySize).asByteBuffer()).flip();
        OpKind kind = batch.kind(i);
        if (kind.hasValue()) {
            b.value.clear();
            b.value.put(batch.values().asSlice(batch.valueOffset(i), batch.valueLength(i)).asByteBuffer()).flip();
        }
        switch (kind) {
            case GET -> {
                ByteBuffer v = db.get(txn, b.key);
                if (v == null) {
                    results.set(i, Outcome.NOT_FOUND);
                } else {
                    results.setValue(i, Outcome.FOUND, MemorySegment.ofBuffer(v), 0, v.remaining());
                }
            }
            case PUT -> {
                boolean existed = db.get(txn, b.key) != null;
                db.put(txn, b.key, b.value);
                results.set(i, existed ? Outcome.UPDATED : Outcome.INSERTED);
            }
            // MDB_NOOVERWRITE: put fails (returns false) when the key exists, in the same B+tree descent.
            case INSERT -> results.set(i, db.put(txn, b.key, b.value, PutFlags.MDB_NOOVERWRITE)
                    ? Outcome.INSERTED : Outcome.EXISTS);
            case UPDATE -> {
                if (db.get(txn, b.key) == null) {
                    results.set(i, Outcome.NOT_FOUND);
                } else {
                    db.put(txn, b.key, b.value);
                    results.set(i, Outcome.UPDATED);
                }
            }
            case DELETE -> results.set(i, db.delete(txn, b.key) ? Outcome.DELETED : Outcome.NOT_FOUND);
            case READ_MODIFY_WRITE -> {
                ByteBuffer v = db.get(txn, b.key);
                if (v == null) {
                    results.set(i, Outcome.NOT_FOUND);
                } else {
                    // The previous value is copied out before the put may reuse its page.
                    results.setValue(i, Outcome.REPLACED, MemorySegment.ofBuffer(v), 0, v.remaining());
                    db.put(txn, b.key, b.value);
                }
            }
        }
    }

    @Override
    public void close() {
        db.close();
        env.close();
    }

    private static final class Buffers {
        final ByteBuffer key;
        final ByteBuffer value;

        Buffers(int keySize, int valueSize) {
            this.key = ByteBuffer.allocateDirect(keySize);
            this.value = ByteBuffer.allocateDirect(valueSize);
        }
    }
}
