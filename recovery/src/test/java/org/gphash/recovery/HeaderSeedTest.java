package org.gphash.recovery;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

import org.gphash.GPHashIndex;
import org.gphash.error.PoolFormatException;
import org.gphash.format.PoolHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, item 2: a header copy whose hash seed was changed and whose checksum was made to match.
 * Before, open took it (the newer copy), wrote it over the intact one, and every key was unreachable
 * while {@code size()} still counted them; {@code check} advised {@code recover --force}, which would
 * have deleted every item.
 */
class HeaderSeedTest {

    private static final int ITEMS = 400;
    private final ToolFixture f = new ToolFixture();

    @AfterEach
    void cleanUp() {
        f.close();
    }

    @Test
    void theCopyTheTableConfirmsIsKeptAndTheOtherRepaired() throws Exception {
        Path p = f.pool("seed.pool", ITEMS);
        byte[] b = Files.readAllBytes(p);
        int newer = newerCopyBase(b);
        long trueSeed = seed(b, newer);
        flipSeedBit(b, newer, 13);
        Files.write(p, b);

        ToolFixture.Run check = ToolFixture.tool("check", p.toString());
        assertFalse(check.all().contains("TORN") || check.all().contains("--force") && check.all().contains("clears the item"),
                "check judged the table by the crafted copy: " + check.all());
        assertTrue(check.all().contains("confirm the copy"), check.all());

        try (GPHashIndex index = GPHashIndex.builder(p).open()) {
            assertEquals(ITEMS, index.size());
            for (long k = 1; k <= ITEMS; k++) {
                assertArrayEquals(ToolFixture.value(k), index.get(k), "key " + k);
            }
        }
        byte[] after = Files.readAllBytes(p);
        assertEquals(trueSeed, seed(after, 0), "copy A holds the true seed");
        assertEquals(trueSeed, seed(after, PoolHeader.COPY_BYTES), "copy B holds the true seed");
        assertEquals(0, ToolFixture.tool("check", p.toString()).code());
    }

    @Test
    void copiesThatTheTableConfirmsNeitherAreRefusedAndLeftAsTheyAre() throws Exception {
        Path p = f.pool("seeds.pool", ITEMS);
        byte[] b = Files.readAllBytes(p);
        flipSeedBit(b, 0, 5);
        flipSeedBit(b, PoolHeader.COPY_BYTES, 9);
        Files.write(p, b);
        PoolFormatException e = assertThrows(PoolFormatException.class, () -> GPHashIndex.builder(p).open());
        assertTrue(e.getMessage().contains("match neither"), e.getMessage());
        assertArrayEquals(b, Files.readAllBytes(p), "a refused open wrote to the pool");
        assertTrue(ToolFixture.tool("check", p.toString()).code() != 0, "check calls it sound");
    }

    private static int newerCopyBase(byte[] b) {
        long a = ByteBuffer.wrap(b, PoolHeader.OFF_SEQUENCE, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        long c = ByteBuffer.wrap(b, PoolHeader.COPY_BYTES + PoolHeader.OFF_SEQUENCE, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        return a >= c ? 0 : PoolHeader.COPY_BYTES;
    }

    private static long seed(byte[] b, int base) {
        return ByteBuffer.wrap(b, base + PoolHeader.OFF_SEEDS, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    /** Flips one bit of seed 0 in the copy at {@code base} and makes its checksum match again. */
    private static void flipSeedBit(byte[] b, int base, int bit) {
        b[base + PoolHeader.OFF_SEEDS + bit / 8] ^= (byte) (1 << (bit % 8));
        CRC32C crc = new CRC32C();
        crc.update(b, base, PoolHeader.OFF_CHECKSUM);
        ByteBuffer.wrap(b, base + PoolHeader.OFF_CHECKSUM, 4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) crc.getValue());
    }
}
