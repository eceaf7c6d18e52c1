package org.gphash.index.api;

import java.nio.file.Path;

import org.gphash.GPHashIndex;
import org.gphash.error.PoolLockedException;

/**
 * Run in child JVMs by {@link ErrorsTest}, several at once: {@code openOrCreate} the pool named by
 * the first argument (retrying while another child has it open), put the key of the second
 * argument, close, and print {@code DONE}; any other failure prints {@code FAILED <exception>}. A
 * third argument makes it a sharded index of that many shards.
 */
public final class OpenOrCreateInChild {

    private OpenOrCreateInChild() {
    }

    public static void main(String[] args) throws Exception {
        Path pool = Path.of(args[0]);
        long key = Long.parseLong(args[1]);
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            GPHashIndex.Builder builder = GPHashIndex.builder(pool).initialCapacity(100);
            if (args.length > 2 && Integer.parseInt(args[2]) > 0) {
                builder.shards(Integer.parseInt(args[2]));
            }
            try (GPHashIndex index = builder.openOrCreate()) {
                index.put(key, ErrorsTest.value(key));
                System.out.println("DONE");
                return;
            } catch (PoolLockedException busy) {
                Thread.sleep(5);
            } catch (Throwable e) {
                System.out.println("FAILED " + e);
                return;
            }
        }
        System.out.println("FAILED timed out");
    }
}
