package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.gphash.GPHashIndex;
import org.gphash.error.GPHashException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, item 9: a pool file zeroed in place while an engine has it open read as empty, and
 * {@code close()} then marked it cleanly shut down. Now sync and close find the header changed,
 * throw, and leave the pool unclean, so the next open refuses it.
 */
class ChangedUnderEngineTest {

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    @Test
    void aPoolZeroedUnderTheEngineIsNotClosedCleanly() throws IOException {
        Path p = pools.pool("zeroed.pool");
        GPHashIndex index = GPHashIndex.builder(p).valueSize(16).create();
        for (long k = 0; k < 1000; k++) {
            index.put(k, new byte[16]);
        }
        index.sync();
        long size = Files.size(p);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocate(1 << 16);
            for (long at = 0; at < size; at += zeros.capacity()) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), size - at));
                ch.write(zeros, at);
            }
        }
        GPHashException sync = assertThrows(GPHashException.class, index::sync);
        assertTrue(sync.getMessage().contains(p.toString()) && sync.getMessage().contains("header copy"), sync.getMessage());
        GPHashException close = assertThrows(GPHashException.class, index::close);
        assertTrue(close.getMessage().contains("not marked cleanly closed"), close.getMessage());
        assertThrows(org.gphash.error.PoolFormatException.class, () -> GPHashIndex.builder(p).open().close(),
                "the zeroed pool opened, or close did not release it");
    }
}
