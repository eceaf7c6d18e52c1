package org.gphash.bench.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import org.gphash.index.api.TestPools;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

class GPHashDBTest {

    private TestPools pools;
    private Path dir;

    @AfterEach
    void cleanUp() throws Exception {
        if (pools != null) {
            pools.close();
        }
        dir = null;
    }

    private DB open(int keySize) throws Exception {
        pools = TestPools.create();
        dir = pools.dir();
        Properties p = new Properties();
        p.setProperty("gphash.path", dir.resolve("y.pool").toString());
        p.setProperty("gphash.keysize", Integer.toString(keySize));
        p.setProperty("recordcount", "100");
        p.setProperty("fieldcount", "1");  // our workload files' records: a value of 128 bytes
        DB db = new GPHashDB();
        db.setProperties(p);
        db.init();
        return db;
    }

    @Test
    void insertReadUpdateDeleteAndNoScan() throws Exception {
        for (int keySize : new int[] {8, 32}) {
            DB db = open(keySize);
            DB second = new GPHashDB();
            second.setProperties(db.getProperties());
            second.init(); // a second client thread shares the same engine
            try {
                Map<String, ByteIterator> record = new HashMap<>(StringByteIterator.getByteIteratorMap(
                        Map.of("field0", "a".repeat(100))));
                assertEquals(Status.OK, db.insert("usertable", "user42", record));
                Map<String, ByteIterator> read = new HashMap<>();
                assertEquals(Status.OK, second.read("usertable", "user42", null, read));
                assertEquals("a".repeat(100), read.get("field0").toString());
                assertEquals(Status.NOT_FOUND, db.read("usertable", "user43", null, new HashMap<>()));

                assertEquals(Status.OK, db.update("usertable", "user42",
                        StringByteIterator.getByteIteratorMap(Map.of("field1", "bb"))));
                read.clear();
                assertEquals(Status.OK, db.read("usertable", "user42", Set.of("field1"), read));
                assertEquals(Map.of("field1", "bb"), StringByteIterator.getStringMap(read));
                read.clear();
                assertEquals(Status.OK, db.read("usertable", "user42", null, read));
                assertEquals(2, read.size(), "update keeps the fields it does not name");
                assertEquals(Status.NOT_FOUND, db.update("usertable", "nobody",
                        StringByteIterator.getByteIteratorMap(Map.of("field0", "x"))));

                assertEquals(Status.BAD_REQUEST, db.insert("usertable", "big",
                        StringByteIterator.getByteIteratorMap(Map.of("field0", "x".repeat(200)))));
                assertEquals(Status.NOT_IMPLEMENTED, db.scan("usertable", "user1", 10, null, new Vector<>()));
                assertEquals(Status.OK, db.delete("usertable", "user42"));
                assertEquals(Status.NOT_FOUND, db.delete("usertable", "user42"));
            } finally {
                second.cleanup();
                db.cleanup(); // the last cleanup closes the pool: it can be opened again
            }
            DB again = new GPHashDB();
            again.setProperties(db.getProperties());
            again.init();
            again.cleanup();
            cleanUp();
        }
    }

    @Test
    void recordCodecRoundTripsAndRefusesWhatDoesNotFit() {
        RecordCodec c = new RecordCodec(32, 128);
        Map<String, byte[]> r = Map.of("field0", "hello".getBytes(StandardCharsets.UTF_8), "f", new byte[3]);
        Map<String, byte[]> back = c.decode(c.encode(r));
        assertEquals(2, back.size());
        assertEquals("hello", new String(back.get("field0"), StandardCharsets.UTF_8));
        assertNull(c.encode(Map.of("field0", new byte[120])));
        assertNull(c.key("k".repeat(33)));
        assertEquals(32, c.key("user1").length);
        RecordCodec eight = new RecordCodec(8, 128);
        assertEquals(8, eight.key("user1").length);
        org.junit.jupiter.api.Assertions.assertFalse(java.util.Arrays.equals(eight.key("user1"), eight.key("user2")));
    }

    @Test
    void valuesAreSizedForTheWorkloadsRecordsAndYcsbsStandardRecordsFit() {
        Properties standard = new Properties();  // YCSB's defaults: ten fields of 100 bytes
        assertEquals(2 + 10 * (1 + 6 + 2 + 100), RecordCodec.recordBytes(10, 100, "field"));
        assertEquals(1104, RecordCodec.valueSizeFor(standard));
        Properties ours = new Properties();
        ours.setProperty("fieldcount", "1");
        assertEquals(128, RecordCodec.valueSizeFor(ours), "one field of 100 bytes keeps the benchmarks' 128");
        ours.setProperty("fieldlength", "1000");
        ours.setProperty("fieldnameprefix", "f");
        assertEquals(1008, RecordCodec.valueSizeFor(ours), "2 + 1 + 2 + 2 + 1000 = 1007, rounded up to 16");
        RecordCodec c = new RecordCodec(8, 1104);
        Map<String, byte[]> record = new HashMap<>();
        for (int f = 0; f < 10; f++) {
            record.put("field" + f, ("" + f).repeat(100).getBytes(StandardCharsets.UTF_8));
        }
        Map<String, byte[]> back = c.decode(c.encode(record));
        assertEquals(10, back.size());
        for (int f = 0; f < 10; f++) {
            assertEquals(("" + f).repeat(100), new String(back.get("field" + f), StandardCharsets.UTF_8));
        }
    }

    /** Where the pool takes values of any length (format 3), a record is stored at its own length, not padded. */
    @Test
    void recordsKeepTheirOwnLengthWhereThePoolTakesAnyLength() {
        RecordCodec own = new RecordCodec(8, 1104, true);
        Map<String, byte[]> record = Map.of("field0", new byte[100], "f", "ab".getBytes(StandardCharsets.UTF_8));
        byte[] v = own.encode(record);
        assertEquals(2 + (1 + 6 + 2 + 100) + (1 + 1 + 2 + 2), v.length, "the record's bytes, no padding");
        assertEquals(2, own.decode(v).size());
        assertEquals("ab", new String(own.decode(v).get("f"), StandardCharsets.UTF_8));
        assertEquals(1104, new RecordCodec(8, 1104).encode(record).length, "padded to the value size otherwise");
        assertNull(own.encode(Map.of("field0", new byte[1200])), "a record over the value size is refused either way");
    }

    /** Clients updating different fields of one record at once lose none of the updates (compare-and-set). */
    @Test
    void concurrentUpdatesOfDifferentFieldsAreAllKept() throws Exception {
        pools = TestPools.create();
        Properties p = new Properties();
        p.setProperty("gphash.path", pools.dir().resolve("fields.pool").toString());
        p.setProperty("recordcount", "10");
        int threads = 8;
        int rounds = 300;
        DB[] dbs = new DB[threads];
        for (int t = 0; t < threads; t++) {
            dbs[t] = new GPHashDB();
            dbs[t].setProperties(p);
            dbs[t].init();
        }
        try {
            Map<String, String> initial = new HashMap<>();
            for (int f = 0; f < threads; f++) {
                initial.put("field" + f, "0");
            }
            assertEquals(Status.OK, dbs[0].insert("usertable", "hot", StringByteIterator.getByteIteratorMap(initial)));
            java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
            Thread[] all = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                int id = t;
                all[t] = Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                        for (int r = 1; r <= rounds; r++) {
                            Status s = dbs[id].update("usertable", "hot",
                                    StringByteIterator.getByteIteratorMap(Map.of("field" + id, Integer.toString(r))));
                            assertEquals(Status.OK, s);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            start.countDown();
            for (Thread th : all) {
                th.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            Map<String, ByteIterator> read = new HashMap<>();
            assertEquals(Status.OK, dbs[0].read("usertable", "hot", null, read));
            Map<String, String> fields = StringByteIterator.getStringMap(read);
            for (int t = 0; t < threads; t++) {
                assertEquals(Integer.toString(rounds), fields.get("field" + t), "field" + t + "'s last update is there");
            }
        } finally {
            for (DB db : dbs) {
                db.cleanup();
            }
        }
    }
}
