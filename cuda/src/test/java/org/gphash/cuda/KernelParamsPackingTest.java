package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.stream.LongStream;

import org.gphash.Geometry;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.ParamStruct;
import org.gphash.format.ValueClasses;
import org.gphash.format.ValueFormat;
import org.gphash.table.TableLayout;
import org.junit.jupiter.api.Test;

/**
 * The packers fill their structs by field name (issue 54); these check, without a GPU, that each puts
 * its arguments at the fields of the same meaning (the packers take them in the header's order), and
 * that a struct with a field left unset or a name it lacks is refused.
 */
class KernelParamsPackingTest {

    private static long[] words(byte[] b) {
        ByteBuffer buf = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        long[] out = new long[b.length / 8];
        for (int i = 0; i < out.length; i++) {
            out[i] = buf.getLong();
        }
        return out;
    }

    private static long[] upTo(int n) {
        return LongStream.rangeClosed(1, n).toArray();
    }

    @Test
    void eachPackerPutsItsArgumentsInTheHeadersOrder() {
        assertArrayEquals(upTo(12), words(KernelParams.cache(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)));
        assertArrayEquals(new long[] {1, 2, 3, 4, 5, 6, 7, 8, 1, 10, 11},
                words(KernelParams.load(1, 2, 3, 4, 5, 6, 7, 8, true, 10, 11)));
        assertArrayEquals(upTo(12), words(KernelParams.scan(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)));
        long[] bitmapHeap = new long[19];  // format 2's fields, then format 3's, zero
        System.arraycopy(upTo(9), 0, bitmapHeap, 0, 9);
        assertArrayEquals(bitmapHeap, words(KernelParams.heap(1, 2, 3, 4, 5, 6, 7, 8, 9)));
        // format 3's: its units' bitmap in format 2's first two fields, then segmented = 1 and the rest
        assertArrayEquals(new long[] {1, 2, 0, 0, 0, 0, 0, 0, 0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                words(KernelParams.segmentHeap(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)));
        assertArrayEquals(upTo(9), words(KernelParams.sortPass(1, 2, 3, 4, 5, 6, 7, 8, 9)));
        assertArrayEquals(upTo(4), words(KernelParams.scanArgs(1, 2, 3, 4)));
        assertArrayEquals(upTo(11), words(KernelParams.partGather(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)));
        assertArrayEquals(upTo(7), words(KernelParams.partScatter(1, 2, 3, 4, 5, 6, 7)));
        assertArrayEquals(upTo(9), words(KernelParams.shardSplit(1, 2, 3, 4, 5, 6, 7, 8, 9)));
        assertArrayEquals(upTo(11), KernelParams.pipeBatch(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11).words());
        assertArrayEquals(new long[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 12, 13, 14, 15, 16, 17},
                words(KernelParams.batch(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, true, new long[] {12, 13, 14, 15, 16, 17})));
    }

    /**
     * TableParams carries the pool's format and, in format 3, the class of a value of the value size,
     * which every word the kernels publish names (issue 53): the CPU engine's full class
     * ({@link ValueFormat#classOf}); -1 in format 2. Each field found by name ({@link ParamStruct#byteOffset}).
     */
    @Test
    void tableParamsCarryThePoolsFormatAndItsValueClass() {
        TableLayout layout = new TableLayout(10, new long[] {4096, 1 << 20}, 128);
        Geometry g = new Geometry(2, 2, 8, 8, 128, false);
        long[] seeds = {1, 2, 3, 4};
        ByteBuffer v3 = ByteBuffer.wrap(KernelParams.table(77, layout, g, seeds, 3)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(3, v3.getLong(KernelParams.TABLE.byteOffset("format")));
        assertEquals(ValueFormat.of(3, 128, false).classOf(128), v3.getLong(KernelParams.TABLE.byteOffset("value_class")));
        assertEquals(ValueClasses.bareClassOf(128), v3.getLong(KernelParams.TABLE.byteOffset("value_class")),
                "a 128-byte value goes bare: a block of 128 bytes, whole lines");
        ByteBuffer v3at120 = ByteBuffer.wrap(KernelParams.table(77, layout, new Geometry(2, 2, 8, 8, 120, false), seeds, 3))
                .order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(ValueClasses.classOf(120), v3at120.getLong(KernelParams.TABLE.byteOffset("value_class")),
                "a 120-byte value behind its header: the framed class of 128-byte blocks");
        assertEquals(128, v3.getLong(KernelParams.TABLE.byteOffset("value_size")));
        assertEquals(77, v3.getLong(KernelParams.TABLE.byteOffset("pool")));
        ByteBuffer v2 = ByteBuffer.wrap(KernelParams.table(77, layout, g, seeds, 2)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(2, v2.getLong(KernelParams.TABLE.byteOffset("format")));
        assertEquals(-1, v2.getLong(KernelParams.TABLE.byteOffset("value_class")));
    }

    @Test
    void aFieldLeftUnsetOrANameTheStructLacksIsRefused() {
        ParamStruct s = ParamStruct.of("Pair", "a", "b[2]");
        assertThrows(IllegalStateException.class, () -> s.writer().put("a", 1).put("b", 0, 2).bytes());
        assertThrows(IllegalArgumentException.class, () -> s.writer().put("c", 1));
        assertThrows(IllegalArgumentException.class, () -> s.writer().put("b", 2, 1));
        assertArrayEquals(new long[] {1, 2, 3}, s.writer().put("a", 1).put("b", 0, 2).put("b", 1, 3).words());
    }
}
