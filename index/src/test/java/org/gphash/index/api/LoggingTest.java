package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import org.gphash.Batch;
import org.gphash.GPHashIndex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine logs through System.Logger "org.gphash" (here the JDK's default, java.util.logging):
 * create, open with what recovery found, resize and heap growth at DEBUG (FINE), nothing at INFO or
 * above when nothing was repaired.
 */
class LoggingTest {

    @TempDir
    Path dir;

    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Logger jul = Logger.getLogger("org.gphash");
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            records.add(r);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private Level before;

    @BeforeEach
    void capture() {
        before = jul.getLevel();
        jul.setLevel(Level.ALL);
        jul.addHandler(handler);
    }

    @AfterEach
    void release() {
        jul.removeHandler(handler);
        jul.setLevel(before);
    }

    private boolean logged(Level level, String text) {
        return records.stream().anyMatch(r -> r.getLevel() == level
                && java.text.MessageFormat.format(r.getMessage(), r.getParameters()).contains(text));
    }

    @Test
    void createResizeGrowthAndOpenAreLoggedAtDebugOnly() {
        Path pool = dir.resolve("log.pool");
        try (GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(64).initialCapacity(64).create()) {
            for (long first = 0; first < 20_000; first += 5_000) {
                Batch b = index.newBatch(5_000);
                for (long k = first; k < first + 5_000; k++) {
                    b.put(k, new byte[64]);
                }
                index.execute(b);
            }
        }
        try (GPHashIndex index = GPHashIndex.builder(pool).open()) {
            assertTrue(index.size() == 20_000);
        }
        assertTrue(logged(Level.FINE, "created pool " + pool), records.toString());
        assertTrue(logged(Level.FINE, "resized pool " + pool), "a resize is logged");
        assertTrue(logged(Level.FINE, "grew the value heap of " + pool), "a heap growth is logged");
        assertTrue(logged(Level.FINE, "opened pool " + pool), "an open is logged");
        assertTrue(records.stream().noneMatch(r -> r.getLevel().intValue() >= Level.INFO.intValue()),
                "nothing at INFO or above when nothing was repaired");
    }
}
