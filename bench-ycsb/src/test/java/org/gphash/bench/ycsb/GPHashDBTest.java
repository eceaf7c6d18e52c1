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
}
