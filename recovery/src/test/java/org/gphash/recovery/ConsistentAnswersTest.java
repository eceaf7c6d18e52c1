package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 55, item 4: one file gets one answer from every tool (the same exit status and words), no
 * JDK class name reaches a message, and {@code -V} prints a version on every subcommand.
 */
class ConsistentAnswersTest {

    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    @Test
    void aFileThatIsNoPoolGetsTheSameAnswerFromEveryTool() throws Exception {
        Path notAPool = f.dir.resolve("notes.txt");
        Files.writeString(notAPool, "hello, not a pool\n");
        for (String[] args : new String[][] {{"check", notAPool.toString()}, {"stats", notAPool.toString()},
                {"recover", notAPool.toString()}, {"dump", notAPool.toString(), f.dir.resolve("x.dump").toString()}}) {
            ToolFixture.Run r = ToolFixture.tool(args);
            assertEquals(RecoveryTool.CANNOT_RUN, r.code(), String.join(" ", args) + ": " + r.all());
            assertTrue(r.all().contains("not a gphash pool"), String.join(" ", args) + ": " + r.all());
        }
        assertFalse(Files.exists(f.dir.resolve("x.dump")));
    }

    @Test
    void messagesNameTheFileNotTheJdkException() {
        Path pool = f.pool("a.pool", 10);
        ToolFixture.Run dump = ToolFixture.tool("dump", pool.toString(), f.dir.resolve("nodir/x.dump").toString());
        assertEquals(RecoveryTool.CANNOT_RUN, dump.code(), dump.all());
        assertTrue(dump.err().contains("no such file or directory") && !dump.err().contains("java."), dump.all());
        ToolFixture.Run imp = ToolFixture.tool("import", f.dir.resolve("nope.dump").toString(),
                f.dir.resolve("b.pool").toString());
        assertEquals(RecoveryTool.CANNOT_RUN, imp.code(), imp.all());
        assertTrue(imp.err().contains("no such file or directory") && !imp.err().contains("java."), imp.all());
    }

    @Test
    void everySubcommandPrintsAVersion() {
        for (String c : new String[] {"check", "recover", "stats", "dump", "import", "snapshot"}) {
            ToolFixture.Run r = ToolFixture.tool(c, "-V");
            assertEquals(0, r.code(), c + ": " + r.all());
            assertTrue(r.out().startsWith("gphash "), c + ": " + r.all());
        }
    }
}
