package example;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Cursor;
import org.gphash.GPHashIndex;
import org.gphash.Outcome;
import org.gphash.error.GPHashException;

/** An application using gphash from its published jar: create, write, read back, reopen. */
public final class Main {

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("gphash-consumer");
        Path pool = dir.resolve("users.pool");
        try (GPHashIndex index = GPHashIndex.builder(pool).keySize(8).valueSize(32).initialCapacity(10_000).create()) {
            for (long k = 0; k < 10_000; k++) {
                index.put(k, value(k));
            }
            Batch batch = index.newBatch(3).get(7L).delete(8L).get(8L);
            BatchResult r = index.execute(batch);
            check(r.outcome(0) == Outcome.FOUND && Arrays.equals(r.value(0), value(7)), "batch get");
            check(r.outcome(1) == Outcome.DELETED && r.outcome(2) == Outcome.NOT_FOUND, "batch delete then get");
            check(index.gpu().isEmpty(), "the CPU engine has no GPU features");
        }
        try (GPHashIndex index = GPHashIndex.builder(pool).open()) {
            long n = 0;
            try (Cursor c = index.cursor()) {
                while (c.next()) {
                    check(Arrays.equals(c.value(), value(c.longKey())), "value of " + c.longKey());
                    n++;
                }
            }
            check(n == 9_999 && index.size() == 9_999, "items after reopen: " + n);
            System.out.println("gphash consumer: 9,999 items written, reopened and read back; " + index.stats());
        }
        try {
            GPHashIndex.builder(pool).keySize(16).open();
            check(false, "a mismatched key size was accepted");
        } catch (GPHashException e) {
            System.out.println("gphash consumer: refused as expected: " + e.getMessage());
        }
        try (GPHashIndex index = GPHashIndex.builder(pool).open()) {
            GPHashIndex.builder(pool).open();
            check(false, "a second open of one pool was accepted");
        } catch (GPHashException e) {  // PoolLockedException, a pool file failure: the same root
            System.out.println("gphash consumer: second open refused as expected: " + e.getMessage());
        }
        Files.delete(pool);
        Files.delete(dir);
    }

    private static byte[] value(long k) {
        return Arrays.copyOf(("user-" + k).getBytes(StandardCharsets.UTF_8), 32);
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("gphash consumer: " + what);
        }
    }
}
