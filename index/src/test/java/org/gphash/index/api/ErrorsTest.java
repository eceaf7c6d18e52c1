package org.gphash.index.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

import org.gphash.Backend;
import org.gphash.BackendUnavailableException;
import org.gphash.Batch;
import org.gphash.GPHashIndex;
import org.gphash.IndexClosedException;
import org.gphash.IndexStats;
import org.gphash.PoolConfigMismatchException;
import org.gphash.PoolFullException;
import org.gphash.RecoveryReport;
import org.gphash.error.PoolFormatException;
import org.gphash.error.PoolIoException;
import org.gphash.error.PoolLockedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One test per error the API can raise: the exception type, a message that names the problem, and,
 * where a file exists, that the file is byte-for-byte what it was before.
 */
class ErrorsTest {

    /** Header layout (see {@code PoolHeader}): two 2048-byte copies, CRC32C of [0, 1792) at 1792. */
    static final int COPY = 2048;
    static final int OFF_VERSION = 8;
    static final int OFF_ACTIVE_LEVELS = 84;
    static final int OFF_FILE_LENGTH = 104;
    static final int OFF_CHECKSUM = 1792;
    static final int ITEMS = 500;

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    // ------------------------------------------------------------------ helpers

    static byte[] value(long key) {
        return ModelProperties.value(key, key + 1, 128);
    }

    /** A closed default pool (8-byte keys, 128-byte values) holding keys 0..ITEMS-1. */
    Path validPool(String name) {
        Path p = pools.pool(name);
        try (GPHashIndex index = GPHashIndex.builder(p).initialCapacity(100).seed(3).create()) {
            for (long k = 0; k < ITEMS; k++) {
                assertTrue(index.insert(k, value(k)));
            }
        }
        return p;
    }

    static void assertHoldsItems(GPHashIndex index) {
        assertEquals(ITEMS, index.stats().size());
        for (long k = 0; k < ITEMS; k++) {
            assertArrayEquals(value(k), index.get(k), "key " + k);
        }
        assertNull(index.get((long) ITEMS));
    }

    static String sha256(Path p) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p)));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Runs {@code open}, expects {@code type} with a message containing every {@code words}, and an unchanged file. */
    static <T extends Throwable> T assertRefusedUnchanged(Path file, Class<T> type, Executable open, String... words) {
        String before = sha256(file);
        long size = size(file);
        T e = assertThrows(type, open);
        assertMessage(e, words);
        assertEquals(size, size(file), "file length changed");
        assertEquals(before, sha256(file), "file content changed");
        return e;
    }

    /** Checks the message, with test pool paths blanked out so that a file's name cannot satisfy the check. */
    static void assertMessage(Throwable e, String... words) {
        String m = e.getMessage();
        assertNotNull(m, "no message: " + e);
        String text = m.replaceAll("\\S*gphash-test-[^/\\s]*/[^\\s:,;]*", "<path>").toLowerCase(Locale.ROOT);
        for (String w : words) {
            assertTrue(text.contains(w.toLowerCase(Locale.ROOT)), "message should mention \"" + w + "\": " + m);
        }
    }

    static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static void patch(Path p, long offset, Consumer<ByteBuffer> write, int length) {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(b, offset);
            b.flip();
            write.accept(b);
            b.rewind();
            ch.write(b, offset);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static void putInt(Path p, long offset, int v) {
        patch(p, offset, b -> b.putInt(0, v), 4);
    }

    static long getLong(Path p, long offset) {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(b, offset);
            return b.getLong(0);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static void flipByte(Path p, long offset) {
        patch(p, offset, b -> b.put(0, (byte) ~b.get(0)), 1);
    }

    static void truncate(Path p, long length) {
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
            f.setLength(length);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Recomputes the CRC32C of the header copy at {@code base}, making a patched copy "valid". */
    static void fixChecksum(Path p, long base) {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(OFF_CHECKSUM);
            ch.read(b, base);
            b.flip();
            CRC32C crc = new CRC32C();
            crc.update(b);
            ByteBuffer out = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, (int) crc.getValue());
            ch.write(out, base + OFF_CHECKSUM);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static GPHashIndex.Builder builder(Path p) {
        return GPHashIndex.builder(p);
    }

    // ------------------------------------------------------------------ files that are not usable pools

    @Test
    void openOfAPathThatDoesNotExist() {
        Path p = pools.pool("missing.pool");
        PoolIoException e = assertThrows(PoolIoException.class, () -> builder(p).open());
        assertMessage(e, "no such file");
        assertTrue(e.getMessage().contains(p.toAbsolutePath().normalize().toString()), "names the path: " + e.getMessage());
        assertFalse(Files.exists(p), "open must not create the file");
    }

    @Test
    void openOfRandomBytes() throws IOException {
        Path p = pools.pool("random.bin");
        byte[] junk = new byte[10_000];
        new Random(42).nextBytes(junk);
        Files.write(p, junk);
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class, () -> builder(p).open(), "not a gphash pool");
        assertEquals(PoolFormatException.Reason.NOT_A_POOL, e.reason());
        assertEquals(p.toAbsolutePath().normalize(), e.path().toAbsolutePath().normalize());
    }

    @Test
    void openOfAShortFileOfRandomBytes() throws IOException {
        Path p = pools.pool("short.bin");
        byte[] junk = new byte[100];
        new Random(43).nextBytes(junk);
        Files.write(p, junk);
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class, () -> builder(p).open(), "not a gphash pool");
        assertEquals(PoolFormatException.Reason.NOT_A_POOL, e.reason());
    }

    @Test
    void openOfAnEmptyFile() throws IOException {
        Path p = pools.pool("empty.pool");
        Files.createFile(p);
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class, () -> builder(p).open(), "not a gphash pool");
        assertEquals(PoolFormatException.Reason.NOT_A_POOL, e.reason());
        assertEquals(0, size(p));
    }

    @Test
    void openOfATextFile() throws IOException {
        Path p = pools.pool("notes.txt");
        Files.writeString(p, "hello, this is not a pool\n".repeat(400), StandardCharsets.UTF_8);
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class,
                () -> builder(p).openOrCreate(), "not a gphash pool");
        assertEquals(PoolFormatException.Reason.NOT_A_POOL, e.reason());
    }

    @Test
    void wrongFormatVersionInBothCopies() {
        Path p = validPool("v4.pool");
        // Only the version field changes, so the checksums no longer verify either: a future format
        // may checksum differently, so the version is what the message names (3 is read: issue 53).
        putInt(p, OFF_VERSION, 4);
        putInt(p, COPY + OFF_VERSION, 4);
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class, () -> builder(p).open(), "version",
                "version 4", "newer build");
        assertEquals(PoolFormatException.Reason.WRONG_VERSION, e.reason());
    }

    @Test
    void anOlderFormatWithValidChecksumsNamesTheWayOut() {
        Path p = validPool("v1.pool");
        for (long base : new long[] {0, COPY}) {
            putInt(p, base + OFF_VERSION, 1);
            fixChecksum(p, base);
        }
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class, () -> builder(p).open(),
                "version 1", "dump", "import");
        assertEquals(PoolFormatException.Reason.WRONG_VERSION, e.reason());
    }

    /**
     * Issue 14, defect 10: one flipped bit in the version field of one copy made the pool unopenable
     * although the other copy was intact. The checksum is now judged before the version.
     */
    @ParameterizedTest
    @ValueSource(ints = {0, COPY})
    void aFlippedVersionBitInOneCopyFallsBackToTheOther(int base) {
        Path p = validPool("version-bit" + base + ".pool");
        putInt(p, base + OFF_VERSION, 2 ^ 1 << 4);
        try (GPHashIndex index = builder(p).open()) {
            assertTrue(index.lastRecovery().headerCopyRepaired(), index.lastRecovery().toString());
            assertHoldsItems(index);
        }
        try (GPHashIndex index = builder(p).open()) {
            assertFalse(index.lastRecovery().headerCopyRepaired(), "both copies were rewritten");
        }
    }

    @Test
    void truncatedInsideTheHeader() {
        Path p = validPool("cut3000.pool");
        truncate(p, 3000);
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class, () -> builder(p).open(), "truncated");
        assertEquals(PoolFormatException.Reason.TRUNCATED, e.reason());
    }

    @Test
    void truncatedBelowTheCommittedLength() {
        Path p = validPool("cut.pool");
        long committed = getLong(p, OFF_FILE_LENGTH);
        assertEquals(committed, getLong(p, COPY + OFF_FILE_LENGTH));
        assertEquals(size(p), committed, "a cleanly closed pool is as long as its header says");
        truncate(p, committed - 4096 - 1);
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class, () -> builder(p).open(),
                "truncated", Long.toString(committed));
        assertEquals(PoolFormatException.Reason.TRUNCATED, e.reason());
    }

    @Test
    void truncatedByOneByte() {
        Path p = validPool("cut1.pool");
        truncate(p, size(p) - 1);
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class, () -> builder(p).open(), "truncated");
        assertEquals(PoolFormatException.Reason.TRUNCATED, e.reason());
    }

    @Test
    void checksumMismatchInBothCopies() {
        Path p = validPool("crc.pool");
        flipByte(p, 1000);
        flipByte(p, COPY + 1000);
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class, () -> builder(p).open(), "checksum");
        assertEquals(PoolFormatException.Reason.CHECKSUM_MISMATCH, e.reason());
    }

    @Test
    void validChecksumButImpossibleContents() {
        Path p = validPool("k1.pool");
        for (long base : new long[] {0, COPY}) {
            putInt(p, base + OFF_ACTIVE_LEVELS, 50);
            fixChecksum(p, base);
        }
        PoolFormatException e = assertRefusedUnchanged(p, PoolFormatException.class, () -> builder(p).open(), "corrupt");
        assertEquals(PoolFormatException.Reason.CORRUPT, e.reason());
    }

    /** 0: a byte inside copy 0, 1: inside copy 1, 2: copy 0's checksum field, 3: copy 1's magic. */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3})
    void oneDamagedHeaderCopyIsRepairedFromTheOther(int damage) {
        Path p = validPool("onecopy" + damage + ".pool");
        long offset = switch (damage) {
            case 0 -> 1000;
            case 1 -> COPY + 1000;
            case 2 -> OFF_CHECKSUM + 1;
            default -> COPY + 3;
        };
        flipByte(p, offset);
        try (GPHashIndex index = builder(p).open()) {
            RecoveryReport r = index.lastRecovery();
            assertTrue(r.headerCopyRepaired(), r.toString());
            assertTrue(r.previousShutdownClean(), r.toString());
            assertEquals(ITEMS, r.items(), r.toString());
            assertHoldsItems(index);
            assertTrue(index.insert((long) ITEMS, value(ITEMS)), "the repaired pool takes writes");
        }
        try (GPHashIndex index = builder(p).open()) {
            assertFalse(index.lastRecovery().headerCopyRepaired(), "both copies were rewritten: " + index.lastRecovery());
            assertArrayEquals(value(ITEMS), index.get((long) ITEMS));
        }
    }

    // ------------------------------------------------------------------ configuration mismatches

    @ParameterizedTest
    @ValueSource(strings = {"keySize", "valueSize", "levels", "hashes", "slotsPerBucket"})
    void geometryMismatchOnOpen(String field) {
        Path p = validPool("m-" + field.length() + ".pool");
        GPHashIndex.Builder b = builder(p);
        String asked = switch (field) {
            case "keySize" -> { b.keySize(16); yield "16"; }
            case "valueSize" -> { b.valueSize(64); yield "64"; }
            case "levels" -> { b.levels(3); yield "3"; }
            case "hashes" -> { b.hashes(3); yield "3"; }
            default -> { b.slotsPerBucket(4); yield "4"; }
        };
        String actual = switch (field) {
            case "keySize" -> "8";
            case "valueSize" -> "128";
            case "levels", "hashes" -> "2";
            default -> "8";
        };
        assertRefusedUnchanged(p, PoolConfigMismatchException.class, b::open, field + " " + asked, "pool has " + actual);
        // Refusing released the pool: a matching open succeeds and finds everything.
        try (GPHashIndex index = builder(p).keySize(8).valueSize(128).levels(2).hashes(2).slotsPerBucket(8).open()) {
            assertHoldsItems(index);
        }
    }

    @Test
    void createOverAnExistingPool() {
        Path p = validPool("exists.pool");
        PoolIoException e = assertRefusedUnchanged(p, PoolIoException.class, () -> builder(p).create(), "already exists");
        assertFalse(e instanceof PoolLockedException);
        try (GPHashIndex index = builder(p).open()) {
            assertHoldsItems(index);
        }
    }

    @Test
    void createOverAnExistingOtherFile() throws IOException {
        Path p = pools.pool("precious.txt");
        Files.writeString(p, "do not overwrite me");
        assertRefusedUnchanged(p, PoolIoException.class, () -> builder(p).keySize(16).create(), "already exists");
        assertEquals("do not overwrite me", Files.readString(p));
    }

    // ------------------------------------------------------------------ exclusivity and permissions

    @Test
    void secondOpenInThisProcess() throws IOException {
        Path p = validPool("twice.pool");
        try (GPHashIndex first = builder(p).open()) {
            String before = sha256(p);
            PoolLockedException e = assertThrows(PoolLockedException.class, () -> builder(p).open());
            assertMessage(e, "already open");
            assertThrows(PoolLockedException.class, () -> builder(p).openOrCreate());
            // The same file through another name (a symbolic link, followed when asked) is the same pool.
            Path link = pools.pool("link.pool");
            Files.createSymbolicLink(link, p);
            assertMessage(assertThrows(PoolLockedException.class, () -> builder(link).followSymlinks(true).open()),
                    "already open");
            assertEquals(before, sha256(p), "failed opens must not write");
            assertHoldsItems(first);
            assertFalse(first.put(1L, value(2)), "the first index still works: put replaces key 1");
        }
        try (GPHashIndex again = builder(p).open()) {
            assertArrayEquals(value(2), again.get(1L));
        }
    }

    @Test
    void secondOpenFromAnotherProcess() throws Exception {
        Path p = validPool("other-process.pool");
        try (GPHashIndex index = builder(p).open()) {
            ChildResult child = runChild(p);
            assertTrue(child.result().startsWith("FAILED " + PoolLockedException.class.getName()), "child said: " + child);
            assertMessage(new AssertionError(child.result()), "locked by another process");
            assertEquals(child.before(), child.after(), "the refused open in the child must not write");
            assertHoldsItems(index);
        }
        // Control: once this process has closed the pool, the child can open it.
        assertEquals("OPENED items=" + ITEMS, runChild(p).result());
    }

    /**
     * A second open in this process is refused, and that refusal must not weaken the first
     * opener's hold on the file: another process must still be refused afterwards.
     */
    @Test
    void refusedSecondOpenInThisProcessKeepsOtherProcessesOut() throws Exception {
        Path p = validPool("refused-then-other-process.pool");
        try (GPHashIndex index = builder(p).open()) {
            assertThrows(PoolLockedException.class, () -> builder(p).open());
            ChildResult child = runChild(p);
            assertTrue(child.result().startsWith("FAILED " + PoolLockedException.class.getName()),
                    "after a refused second open in this process, another process could open the pool that is "
                            + "still open here; child said: " + child);
            assertHoldsItems(index);
        }
    }

    /**
     * Issue 14, defect 1: the lock was a POSIX record lock, which the kernel drops when the owning
     * process closes any descriptor of the file; reading the pool file in the owner let a second
     * process open and write it.
     */
    @Test
    void readingThePoolFileInTheOwningProcessKeepsOtherProcessesOut() throws Exception {
        Path p = validPool("read-while-open.pool");
        try (GPHashIndex index = builder(p).open()) {
            assertTrue(Files.readAllBytes(p).length > 0);
            try (FileChannel other = FileChannel.open(p, StandardOpenOption.READ)) {
                assertTrue(other.size() > 0);
            }
            ChildResult child = runChild(p);
            assertTrue(child.result().startsWith("FAILED " + PoolLockedException.class.getName()),
                    "after this process read the pool file, another process could open the pool still open here; "
                            + "child said: " + child);
            assertEquals(child.before(), child.after(), "the refused open in the child must not write");
            assertHoldsItems(index);
        }
    }

    /** Issue 14, defect 1: a refused open through a hard link (another name of the same file). */
    @Test
    void refusedOpenThroughAHardLinkKeepsOtherProcessesOut() throws Exception {
        Path p = validPool("hard-linked.pool");
        Path link = pools.pool("hard-link.pool");
        Files.createLink(link, p);
        try (GPHashIndex index = builder(p).open()) {
            assertMessage(assertThrows(PoolLockedException.class, () -> builder(link).open()), "already open");
            assertThrows(PoolLockedException.class, () -> builder(link).openOrCreate());
            for (Path name : List.of(p, link)) {
                ChildResult child = runChild(name);
                assertTrue(child.result().startsWith("FAILED " + PoolLockedException.class.getName()),
                        "after a refused open through a hard link, another process could open " + name
                                + "; child said: " + child);
            }
            assertHoldsItems(index);
        }
        assertEquals("OPENED items=" + ITEMS, runChild(link).result());
    }

    record ChildResult(String before, String after, String result) {
    }

    private static ChildResult runChild(Path pool) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx64m",
                "-cp", System.getProperty("java.class.path"), OpenPoolInChild.class.getName(), pool.toString()));
        Process proc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(proc.waitFor(60, TimeUnit.SECONDS), "child did not finish");
        assertEquals(0, proc.exitValue(), "child output: " + out);
        String before = null;
        String after = null;
        String result = null;
        for (String line : out.split("\\R")) {
            if (line.startsWith("BEFORE ")) {
                before = line.substring(7);
            } else if (line.startsWith("AFTER ")) {
                after = line.substring(6);
            } else if (line.startsWith("OPENED") || line.startsWith("FAILED")) {
                result = line;
            }
        }
        if (before == null || after == null || result == null) {
            fail("child printed no result: " + out);
        }
        return new ChildResult(before, after, result);
    }

    // ------------------------------------------------------------------ issue 14, defects 12 and 14

    @Test
    void aLinkAtThePathIsNotFollowedUnlessAsked() throws IOException {
        Path p = validPool("target.pool");
        Path link = pools.pool("planted-link.pool");
        Files.createSymbolicLink(link, p);
        String before = sha256(p);
        assertMessage(assertThrows(PoolIoException.class, () -> builder(link).open()), "symbolic link");
        assertMessage(assertThrows(PoolIoException.class, () -> builder(link).openOrCreate()), "symbolic link");
        assertEquals(before, sha256(p), "a refused open must not write");
        try (GPHashIndex index = builder(link).followSymlinks(true).open()) {
            assertHoldsItems(index);
        }
    }

    @Test
    void aPoolThatOthersMayWriteIsRefused() throws IOException {
        Path p = validPool("world-writable.pool");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-rw-rw-"));
        assertRefusedUnchanged(p, PoolIoException.class, () -> builder(p).open(), "group or others may write", "chmod 600");
        assertRefusedUnchanged(p, PoolIoException.class, () -> builder(p).openOrCreate(), "chmod 600");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
        try (GPHashIndex index = builder(p).open()) {
            assertHoldsItems(index);
        }
    }

    @Test
    void aPoolOfAnotherUserIsRefused() throws IOException {
        Path p = validPool("someone-elses.pool");
        java.nio.file.attribute.UserPrincipal nobody;
        try {
            nobody = p.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
            Files.setOwner(p, nobody);
        } catch (IOException | UnsupportedOperationException e) {
            org.junit.jupiter.api.Assumptions.assumeTrue(false, "cannot give the file to another user here: " + e);
            return;
        }
        assertRefusedUnchanged(p, PoolIoException.class, () -> builder(p).open(), "belongs to user", "only by its owner");
        assertRefusedUnchanged(p, PoolIoException.class, () -> builder(p).openOrCreate(), "only by its owner");
    }

    /**
     * Defect 12: processes racing to openOrCreate one pool: the losers open what the winner created
     * (waiting while it is open) instead of failing with "already exists" or "not a pool".
     */
    @Test
    void openOrCreateRacesEndWithOnePoolHoldingEveryonesWrites() throws Exception {
        openOrCreateRace(pools.pool("race.pool"), 0);
    }

    /** Issue 52, item 6: the same race on a sharded index (three of four losers were told to remove the winner's). */
    @Test
    void openOrCreateRacesOnAShardedIndexEndWithOneIndexHoldingEveryonesWrites() throws Exception {
        openOrCreateRace(pools.pool("race-index"), 3);
    }

    private void openOrCreateRace(Path p, int shards) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> children = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            children.add(new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx64m", "-cp",
                    System.getProperty("java.class.path"), OpenOrCreateInChild.class.getName(), p.toString(),
                    Integer.toString(i), Integer.toString(shards)).redirectErrorStream(true).start());
        }
        for (Process c : children) {
            String out = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(c.waitFor(60, TimeUnit.SECONDS), "child did not finish");
            assertTrue(out.contains("DONE"), "child: " + out);
        }
        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            for (long k = 0; k < 4; k++) {
                assertArrayEquals(value(k), index.get(k), "the write of child " + k);
            }
        }
        try (var left = Files.list(p.getParent())) {
            assertEquals(List.of(), left.filter(f -> f.getFileName().toString().contains(".creating-")).toList(),
                    "a staging directory was left behind");
        }
    }

    /**
     * Issue 14, defect 9: a pool file cut while the engine had it open. The next growth used to
     * re-extend it with zeros (items then read as all-zero values), and touching a lost page threw
     * java.lang.InternalError. Now growth and close refuse, and a lost page is the engine's exception.
     */
    @Test
    void aFileCutWhileOpenIsNotPaperedOver() throws IOException {
        Path p = pools.pool("cut-while-open.pool");
        GPHashIndex index = builder(p).initialCapacity(16).create();
        for (long k = 0; k < ITEMS; k++) {
            index.insert(k, value(k));
        }
        long committed = Files.size(p);
        truncate(p, committed - 3 * 4096);
        Throwable failure = null;
        for (long k = ITEMS; k < 100 * ITEMS && failure == null; k++) {
            try {
                index.insert(k, value(k));
            } catch (Throwable e) {
                failure = e;
            }
        }
        assertNotNull(failure, "inserting into a cut pool never failed");
        assertTrue(failure instanceof PoolIoException, "not the engine's exception: " + failure);
        assertMessage(failure, "truncated while open");
        assertTrue(Files.size(p) < committed, "the file was grown over the cut");
        for (long k = 0; k < ITEMS; k++) {
            try {
                byte[] v = index.get(k);
                assertArrayEquals(value(k), v, "key " + k + " read back wrong instead of failing");
            } catch (PoolIoException e) {
                assertMessage(e, "truncated while open");
            }
        }
        assertMessage(assertThrows(PoolIoException.class, index::close), "truncated while open");
        PoolFormatException e = assertThrows(PoolFormatException.class, () -> builder(p).open());
        assertEquals(PoolFormatException.Reason.TRUNCATED, e.reason());
    }

    @Test
    void newPoolFilesAreOwnerOnly() throws IOException {
        Path p = pools.pool("perm.pool");
        try (GPHashIndex index = builder(p).initialCapacity(16).create()) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(p)));
            for (long k = 0; k < 20_000; k++) {
                index.insert(k, value(k));
            }
            assertTrue(index.stats().resizes() > 0 && index.stats().heapGrowths() > 0, index.stats().toString());
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(p)),
                    "growing the file keeps its permissions");
        }
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(p)));
    }

    // ------------------------------------------------------------------ bad arguments

    @Test
    void wrongKeyAndValueLengthsAreRefusedAndChangeNothing() {
        Path p = validPool("args.pool");
        try (GPHashIndex index = builder(p).open()) {
            String before = sha256(p);
            byte[] key1 = TestPools.longKey(1);
            byte[] good = value(99);
            List<Executable> badKeys = List.of(
                    () -> index.get(new byte[7]),
                    () -> index.put(new byte[9], good),
                    () -> index.insert(new byte[7], good),
                    () -> index.update(new byte[16], good),
                    () -> index.delete(new byte[7]),
                    () -> index.containsKey(new byte[0]),
                    () -> index.get(MemorySegment.ofArray(new byte[7]), MemorySegment.ofArray(new byte[128])),
                    () -> index.newBatch(1).put(new byte[7], good));
            for (Executable x : badKeys) {
                assertMessage(assertThrows(IllegalArgumentException.class, x), "key", "8", "got");
            }
            List<Executable> badValues = List.of(
                    () -> index.put(key1, new byte[127]),
                    () -> index.insert(key1, new byte[129]),
                    () -> index.update(key1, new byte[0]),
                    () -> index.put(1L, new byte[127]),
                    () -> index.put(MemorySegment.ofArray(key1), MemorySegment.ofArray(new byte[64])),
                    () -> index.get(MemorySegment.ofArray(key1), MemorySegment.ofArray(new byte[127])),
                    () -> index.newBatch(1).update(key1, new byte[127]));
            for (Executable x : badValues) {
                assertMessage(assertThrows(IllegalArgumentException.class, x), "128", "got");
            }
            assertMessage(assertThrows(IllegalArgumentException.class, () -> index.put(key1, new byte[127])), "127");
            assertMessage(assertThrows(IllegalArgumentException.class, () -> index.get(new byte[7])), "7");
            // A read-only output segment cannot receive a value.
            assertMessage(assertThrows(IllegalArgumentException.class, () -> index.get(MemorySegment.ofArray(key1),
                    MemorySegment.ofArray(new byte[128]).asReadOnly())), "read-only");
            // Nulls.
            assertMessage(assertThrows(NullPointerException.class, () -> index.get((byte[]) null)), "key");
            assertMessage(assertThrows(NullPointerException.class, () -> index.put((byte[]) null, good)), "key");
            assertMessage(assertThrows(NullPointerException.class, () -> index.put(key1, null)), "value");
            assertMessage(assertThrows(NullPointerException.class, () -> index.delete((byte[]) null)), "key");
            assertMessage(assertThrows(NullPointerException.class, () -> index.get((MemorySegment) null,
                    MemorySegment.ofArray(new byte[128]))), "key");
            assertThrows(NullPointerException.class, () -> index.execute(null));
            // A batch made for another geometry.
            Batch foreign = Batch.create(16, 128, 1);
            assertMessage(assertThrows(IllegalArgumentException.class, () -> index.execute(foreign)), "16", "8");
            assertEquals(before, sha256(p), "refused calls must not write to the pool");
            assertHoldsItems(index);
        }
    }

    @Test
    void longKeyMethodsOnAPoolWithWiderKeys() {
        Path p = pools.pool("wide.pool");
        try (GPHashIndex index = builder(p).keySize(16).valueSize(32).create()) {
            byte[] k = new byte[16];
            k[0] = 1;
            byte[] v = new byte[32];
            v[0] = 7;
            assertTrue(index.insert(k, v));
            byte[] v32 = new byte[32];
            List<Executable> longCalls = List.of(
                    () -> index.get(1L),
                    () -> index.put(1L, v32),
                    () -> index.insert(2L, v32),
                    () -> index.update(1L, v32),
                    () -> index.delete(1L),
                    () -> index.newBatch(1).get(1L),
                    () -> index.newBatch(1).put(1L, v32));
            for (Executable x : longCalls) {
                assertMessage(assertThrows(IllegalArgumentException.class, x), "keySize 8", "16");
            }
            assertEquals(1, index.stats().size());
            assertArrayEquals(v, index.get(k));
        }
    }

    @Test
    void operationsAfterCloseAreRefused() {
        Path p = validPool("c1.pool");
        GPHashIndex index = builder(p).open();
        Batch batch = index.newBatch(1).get(1L);
        index.close();
        String before = sha256(p);
        byte[] k = TestPools.longKey(1);
        byte[] v = value(1);
        List<Executable> calls = List.of(
                () -> index.get(1L), () -> index.get(k), () -> index.containsKey(k),
                () -> index.put(1L, v), () -> index.put(k, v),
                () -> index.insert(1L, v), () -> index.insert(k, v),
                () -> index.update(1L, v), () -> index.update(k, v),
                () -> index.delete(1L), () -> index.delete(k),
                () -> index.get(MemorySegment.ofArray(k), MemorySegment.ofArray(new byte[128])),
                () -> index.put(MemorySegment.ofArray(k), MemorySegment.ofArray(v)),
                () -> index.execute(batch),
                index::stats,
                index::lastRecovery);
        for (Executable x : calls) {
            assertMessage(assertThrows(IndexClosedException.class, x), "closed");
        }
        index.close(); // idempotent
        assertEquals(before, sha256(p));
        try (GPHashIndex reopened = builder(p).open()) {
            assertTrue(reopened.lastRecovery().previousShutdownClean());
            assertHoldsItems(reopened);
        }
    }

    // ------------------------------------------------------------------ invalid configuration

    @Test
    void invalidGeometryIsRefusedBeforeAnyFileIsCreated() {
        Path p = pools.pool("geometry.pool");
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> builder(p).levels(4).hashes(4).slotsPerBucket(4).create()), "at most 32", "64");
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> builder(p).levels(2).hashes(2).slotsPerBucket(16).create()), "at most 32");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).levels(9).hashes(1).slotsPerBucket(1).create()),
                "levels");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).hashes(5).levels(1).slotsPerBucket(1).create()),
                "hashes");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).keySize(300).create()), "keySize", "300");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).valueSize((1 << 20) + 1).create()),
                "valueSize");
        assertFalse(Files.exists(p), "no file for an invalid geometry");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).keySize(0)), "keySize", "0");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).valueSize(-1)), "valueSize");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).levels(0)), "levels");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).hashes(0)), "hashes");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).slotsPerBucket(0)), "slotsPerBucket");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).initialCapacity(0)), "initialCapacity");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> builder(p).maxPoolBytes(0)), "maxPoolBytes");
        assertThrows(NullPointerException.class, () -> GPHashIndex.builder(null));
        assertThrows(NullPointerException.class, () -> builder(p).backend(null));
        assertFalse(Files.exists(p));
        // The largest legal candidate set (exactly one warp) is accepted.
        try (GPHashIndex index = builder(p).levels(4).hashes(2).slotsPerBucket(4).create()) {
            assertTrue(index.insert(1L, value(1)));
        }
    }

    @Test
    void maxPoolBytesTooSmallForTheInitialPool() {
        Path p = pools.pool("tiny.pool");
        PoolFullException e = assertThrows(PoolFullException.class, () -> builder(p).maxPoolBytes(10_000).create());
        assertMessage(e, "10000");
        assertFalse(Files.exists(p), "no file when the pool cannot be created within the limit");
    }

    @Test
    void maxPoolBytesStopsGrowthAndKeepsEverythingInsertedBefore() {
        Path probe = pools.pool("size-probe.pool");
        long initial;
        try (GPHashIndex index = builder(probe).initialCapacity(16).create()) {
            initial = index.stats().fileBytes();
        }
        long max = initial + 16 * 1024;
        Path p = pools.pool("full.pool");
        List<Long> inserted = new ArrayList<>();
        PoolFullException full = null;
        try (GPHashIndex index = builder(p).initialCapacity(16).maxPoolBytes(max).create()) {
            for (long k = 0; k < 1_000_000 && full == null; k++) {
                try {
                    assertTrue(index.insert(k, value(k)));
                    inserted.add(k);
                } catch (PoolFullException e) {
                    full = e;
                    assertNull(index.get(k), "the refused insert left nothing behind");
                }
            }
            assertNotNull(full, "the pool never filled up: " + index.stats());
            assertMessage(full, "maximum", Long.toString(max));
            IndexStats s = index.stats();
            assertTrue(s.fileBytes() <= max, "file grew past maxPoolBytes: " + s);
            assertEquals(inserted.size(), s.size(), s.toString());
            for (long k : inserted) {
                assertArrayEquals(value(k), index.get(k), "key " + k);
            }
            // Still refused, and still consistent.
            long next = inserted.size();
            assertThrows(PoolFullException.class, () -> index.insert(next, value(next)));
            assertEquals(inserted.size(), index.stats().size());
        }
        try (GPHashIndex index = builder(p).open()) {
            RecoveryReport r = index.lastRecovery();
            assertTrue(r.previousShutdownClean(), r.toString());
            assertFalse(r.repairedAnything(), r.toString());
            assertEquals(inserted.size(), r.items(), r.toString());
            for (long k : inserted) {
                assertArrayEquals(value(k), index.get(k), "key " + k + " after reopen");
            }
            // Opened without the limit, the pool grows again.
            for (long k = inserted.size(); k < inserted.size() + 5000L; k++) {
                assertTrue(index.insert(k, value(k)), "key " + k);
            }
            assertTrue(index.stats().fileBytes() > max, index.stats().toString());
        }
    }

    @Test
    void gpuBackendIsUnavailable() {
        Path p = pools.pool("g1.pool");
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                () -> builder(p).backend(Backend.GPU).create());
        assertMessage(e, "GPU", "org.gphash:gphash-cuda");  // names the artifact that brings the engine
        assertFalse(Files.exists(p));
        Path existing = validPool("g2.pool");
        assertRefusedUnchanged(existing, BackendUnavailableException.class,
                () -> builder(existing).backend(Backend.GPU).open(), "GPU");
    }
}
