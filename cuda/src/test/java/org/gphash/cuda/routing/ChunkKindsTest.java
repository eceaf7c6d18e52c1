package org.gphash.cuda.routing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

import org.gphash.OpKind;
import org.junit.jupiter.api.Test;

/** A batch's kinds counted chunk by chunk, each once: every chunk's counts, asked in any order and again, are a plain count's. No GPU. */
class ChunkKindsTest {

    @Test
    void everyChunkMatchesAPlainCountInAnyOrderAndAcrossReuse() {
        Random random = new Random(25);
        ChunkKinds counted = new ChunkKinds();  // reused across batches of every size, as each thread's is
        try (Arena arena = Arena.ofConfined()) {
            for (int round = 0; round < 300; round++) {
                int n = 1 + random.nextInt(round % 3 == 0 ? 300_000 : 5_000);
                int chunk = 1 + random.nextInt(round % 2 == 0 ? n : 70_000);
                MemorySegment kinds = arena.allocate(n);
                int skew = random.nextInt(OpKind.COMPARE_AND_SET.ordinal());
                for (int i = 0; i < n; i++) {
                    int k = random.nextInt(4) == 0 ? random.nextInt(OpKind.COMPARE_AND_SET.ordinal()) : skew;
                    kinds.set(ValueLayout.JAVA_BYTE, i, (byte) k);
                }
                counted.prepare(kinds, n, chunk);
                long[] got = new long[3];
                int chunks = (n + chunk - 1) / chunk;
                counted.chunk(random.nextInt(chunks) * chunk, got);  // one chunk first (the pin asks for the first)
                for (int pass = 0; pass < 2; pass++) {
                    for (int first = 0; first < n; first += chunk) {
                        counted.chunk(first, got);
                        assertArrayEquals(plainCount(kinds, first, Math.min(chunk, n - first)), got,
                                "round " + round + ", pass " + pass + ", chunk at " + first + " of " + n + " by " + chunk);
                    }
                }
            }
        }
    }

    @Test
    void aPartsChunksCountTheKindsAtItsPositions() {
        Random random = new Random(26);
        ChunkKinds counted = new ChunkKinds();  // reused, as each prepared batch's is
        try (Arena arena = Arena.ofConfined()) {
            for (int round = 0; round < 100; round++) {
                int n = 1 + random.nextInt(100_000);
                MemorySegment kinds = arena.allocate(n);
                // A batch of one kind (each of them in turn: its chunks are not read), or of mixed kinds.
                int only = round % 2 == 0 ? (round / 2) % OpKind.COMPARE_AND_SET.ordinal() : -1;
                for (int i = 0; i < n; i++) {
                    int k = only >= 0 ? only : random.nextInt(OpKind.COMPARE_AND_SET.ordinal());
                    kinds.set(ValueLayout.JAVA_BYTE, i, (byte) k);
                }
                // A shard's part: every operation with probability 1/3, ascending, copied out for the plain count.
                MemorySegment positions = arena.allocate(4L * n, 4);
                MemorySegment partKinds = arena.allocate(n);
                int m = 0;
                for (int i = 0; i < n; i++) {
                    if (random.nextInt(3) == 0) {
                        positions.setAtIndex(ValueLayout.JAVA_INT, m, i);
                        partKinds.set(ValueLayout.JAVA_BYTE, m++, kinds.get(ValueLayout.JAVA_BYTE, i));
                    }
                }
                int chunk = 1 + random.nextInt(Math.max(1, m));
                counted.preparePart(kinds, positions, m, chunk, n);
                long[] got = new long[3];
                for (int first = 0; first < m; first += chunk) {
                    counted.chunk(first, got);
                    assertArrayEquals(plainCount(partKinds, first, Math.min(chunk, m - first)), got,
                            "round " + round + ", chunk at " + first + " of " + m);
                }
            }
        }
    }

    private static long[] plainCount(MemorySegment kinds, int first, int m) {
        long[] e = new long[3];
        for (int i = first; i < first + m; i++) {
            int k = kinds.get(ValueLayout.JAVA_BYTE, i);
            e[0] += k == OpKind.GET.ordinal() ? 1 : 0;
            e[1] += k == OpKind.DELETE.ordinal() ? 1 : 0;
            e[2] += k == OpKind.READ_MODIFY_WRITE.ordinal() ? 1 : 0;
        }
        return e;
    }
}
