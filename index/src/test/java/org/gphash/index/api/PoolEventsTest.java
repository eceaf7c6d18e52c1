package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.gphash.Batch;
import org.gphash.GPHashIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A JFR recording sees the pool's opens, resizes and heap growths as gphash events. */
class PoolEventsTest {

    @TempDir
    Path dir;

    @Test
    void opensResizesAndHeapGrowthsAreRecorded() throws Exception {
        Path pool = dir.resolve("e.pool");
        Path jfr = dir.resolve("events.jfr");
        try (Recording r = new Recording()) {
            r.enable("org.gphash.PoolOpen");
            r.enable("org.gphash.Resize");
            r.enable("org.gphash.HeapGrowth");
            r.start();
            try (GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(64).initialCapacity(64).create()) {
                Batch b = index.newBatch(20_000);
                for (long k = 0; k < 20_000; k++) {
                    b.put(k, new byte[64]);
                }
                index.execute(b);
            }
            GPHashIndex.builder(pool).open().close();
            r.stop();
            r.dump(jfr);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfr);
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("org.gphash.PoolOpen")
                && e.getBoolean("created") && e.getString("path").equals(pool.toString())), events.toString());
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("org.gphash.PoolOpen")
                && !e.getBoolean("created") && e.getLong("items") == 20_000 && e.getBoolean("fromCloseRecord")));
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("org.gphash.Resize")
                && e.getInt("topLevelLog2") > 0));
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("org.gphash.HeapGrowth")
                && e.getLong("bytes") > 0));
    }
}
