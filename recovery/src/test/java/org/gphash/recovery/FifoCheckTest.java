package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Issue 27, item 5: {@code check} on a FIFO waited forever for a writer; it now says what the path is. */
class FifoCheckTest {

    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    @Test
    void checkOfAFifoEndsAtOnceWithCannotOpen() throws Exception {
        Path fifo = f.dir.resolve("planted.pool");
        Process mk = new ProcessBuilder("mkfifo", "-m", "600", fifo.toString()).inheritIO().start();
        assumeTrue(mk.waitFor() == 0, "mkfifo is not available");
        ToolFixture.Run run = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> ToolFixture.tool("check", fifo.toString()));
        assertEquals(2, run.code(), run.all());
        assertTrue(run.all().contains("FIFO"), run.all());
    }
}
