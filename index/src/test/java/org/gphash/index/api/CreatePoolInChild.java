package org.gphash.index.api;

import java.nio.file.Files;
import java.nio.file.Path;

import org.gphash.GPHashIndex;

/**
 * Run in a child JVM by {@link LimitsTest} under a file-size limit ({@code ulimit -f}), so that
 * creating a pool runs out of space: tries to create the pool named by the first argument for the
 * number of items in the second, and prints {@code CREATED} or {@code FAILED <exception class>},
 * then {@code LEFT <whether the file exists>}.
 */
public final class CreatePoolInChild {

    private CreatePoolInChild() {
    }

    public static void main(String[] args) {
        Path pool = Path.of(args[0]);
        try (GPHashIndex index = GPHashIndex.builder(pool).initialCapacity(Long.parseLong(args[1])).create()) {
            System.out.println("CREATED " + index.stats().fileBytes());
        } catch (Throwable e) {
            System.out.println("FAILED " + e.getClass().getName() + " " + e.getMessage());
        }
        System.out.println("LEFT " + Files.exists(pool));
    }
}
