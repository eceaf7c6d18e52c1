package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, defects 5, 6 and 8: the files {@code dump}, {@code import} and {@code snapshot} write.
 * They remove only what they created, never a file or link that was at the target before; dumps are
 * owner-only like pools; a snapshot never replaces a file that appears at its target.
 */
class OutputFilesTest {

    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    @Test
    void dumpsAreOwnerOnly() throws Exception {
        Path p = f.pool("a.pool", 50);
        Path d = f.dir.resolve("a.dump");
        assertEquals(0, ToolFixture.tool("dump", p.toString(), d.toString()).code());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(d)));
    }

    @Test
    void dumpLeavesADanglingLinkAtItsTargetAlone() throws Exception {
        Path p = f.pool("a.pool", 50);
        Path link = f.dir.resolve("link.dump");
        Files.createSymbolicLink(link, f.dir.resolve("nowhere"));
        ToolFixture.Run r = ToolFixture.tool("dump", p.toString(), link.toString());
        assertNotEquals(0, r.code(), r.all());
        assertTrue(r.all().contains("already exists"), r.all());
        assertTrue(Files.isSymbolicLink(link), "dump deleted a link it did not create");
    }

    @Test
    void importLeavesWhatIsAtItsTargetAlone() throws Exception {
        Path p = f.pool("a.pool", 50);
        Path d = f.dir.resolve("a.dump");
        assertEquals(0, ToolFixture.tool("dump", p.toString(), d.toString()).code());
        // A dangling link passes a check for an existing file, then the create fails: the link stays.
        Path link = f.dir.resolve("link.pool");
        Files.createSymbolicLink(link, f.dir.resolve("nowhere.pool"));
        ToolFixture.Run r = ToolFixture.tool("import", d.toString(), link.toString());
        assertNotEquals(0, r.code(), r.all());
        assertTrue(Files.isSymbolicLink(link), "import deleted a link it did not create: " + r.all());
        assertFalse(Files.exists(f.dir.resolve("nowhere.pool")), "import followed the link");
    }

    @Test
    void importThatFailsRemovesOnlyThePoolItMade() throws Exception {
        Path d = f.dir.resolve("bad.dump");
        Path p = f.pool("a.pool", 50);
        assertEquals(0, ToolFixture.tool("dump", p.toString(), d.toString()).code());
        byte[] bytes = Files.readAllBytes(d);
        bytes[bytes.length - 3] ^= 1;  // the trailer's checksum no longer matches
        Files.write(d, bytes);
        Path target = f.dir.resolve("new.pool");
        ToolFixture.Run r = ToolFixture.tool("import", d.toString(), target.toString());
        assertNotEquals(0, r.code(), r.all());
        assertFalse(Files.exists(target, LinkOption.NOFOLLOW_LINKS), "the half-built pool was left: " + r.all());
    }

    @Test
    void aSnapshotNeverReplacesAFileThatAppearsAtItsTarget() throws Exception {
        Path tmp = f.dir.resolve(".x.partial");
        Files.writeString(tmp, "the copy");
        Path target = f.dir.resolve("x.snapshot");
        Files.writeString(target, "someone else's file", StandardCharsets.UTF_8);
        org.gphash.error.PoolExistsException e = assertThrows(org.gphash.error.PoolExistsException.class,
                () -> org.gphash.persistence.NoReplaceCopy.publish(tmp, target));
        assertTrue(e.getMessage().contains("appeared while the copy was made"), e.getMessage());
        assertEquals("someone else's file", Files.readString(target));
        Files.deleteIfExists(tmp);
        // With nothing there, the copy takes the name.
        Files.writeString(tmp, "the copy");
        Path free = f.dir.resolve("y.snapshot");
        org.gphash.persistence.NoReplaceCopy.publish(tmp, free);
        assertArrayEquals("the copy".getBytes(StandardCharsets.UTF_8), Files.readAllBytes(free));
        assertFalse(Files.exists(tmp));
    }

    @Test
    void aSnapshotLeavesSomeoneElsesWorkingFileAlone() throws Exception {
        Path p = f.pool("a.pool", 50);
        Path target = f.dir.resolve("s.snapshot");
        Path tmp = f.dir.resolve(".s.snapshot.partial");
        Files.writeString(tmp, "another snapshot in progress");
        ToolFixture.Run r = ToolFixture.tool("snapshot", p.toString(), target.toString());
        assertNotEquals(0, r.code(), r.all());
        assertTrue(r.all().contains("another copy"), r.all());
        assertEquals("another snapshot in progress", Files.readString(tmp));
        assertFalse(Files.exists(target));
    }
}
