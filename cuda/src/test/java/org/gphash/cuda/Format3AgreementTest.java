package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import org.gphash.format.MetaFormat;
import org.gphash.format.SlotMetaV3;
import org.gphash.format.ValueBlockHeader;
import org.gphash.format.ValueClasses;
import org.gphash.format.ValueFormat;
import org.gphash.table.SizeClassHeap;
import org.junit.jupiter.api.Test;

/**
 * Format 3's layout constants (issue 53: the value size classes, the meta word with a class field, the
 * value block header) on the CUDA side (core/value_classes.cuh, core/slot_meta_v3.cuh,
 * core/value_block_header.cuh, built for the host by nvcc: cuda/src/test/cuda/format3_check.cu)
 * against the Java side ({@link ValueClasses}, {@link SlotMetaV3}, {@link ValueBlockHeader}), without
 * a GPU, as {@link CudaAlgorithmAgreementTest} does for the key hash: both reproduce a committed file
 * of known answers and agree on random inputs. The CUDA half needs nvcc and skips, saying so, without
 * it.
 */
class Format3AgreementTest {

    private static final String VECTORS = "/format3-vectors.txt";
    private static final HostCheckProgram CHECKER = new HostCheckProgram("format3_check");

    @Test
    void theJavaSideGivesTheKnownAnswers() throws IOException {
        List<String[]> vectors = HostCheckProgram.knownAnswers(VECTORS);
        assertTrue(vectors.size() >= ValueClasses.COUNT + 40, "the known-answer file has its vectors");
        for (String[] v : vectors) {
            assertEquals(v[1], javaLine(v[0]), "Java, input " + v[0]);
        }
    }

    @Test
    void theCudaSideGivesTheKnownAnswers() throws Exception {
        List<String[]> vectors = HostCheckProgram.knownAnswers(VECTORS);
        List<String> out = CHECKER.run(vectors.stream().map(v -> v[0]).toList());
        for (int i = 0; i < vectors.size(); i++) {
            assertEquals(vectors.get(i)[1], out.get(i), "CUDA (built for the host), input " + vectors.get(i)[0]);
        }
    }

    @Test
    void theCudaSideAgreesWithJavaOnRandomInputs() throws Exception {
        SplittableRandom random = new SplittableRandom(20261129L);
        List<String> inputs = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            if (i % 5 == 0) {
                // The GPU's classes of lengths and its segments' block starts (issue 53, step 3b).
                int vs = random.nextBoolean() ? 1 + random.nextInt(8000) : ValueClasses.blockBytes(random.nextInt(80));
                int small = smallClass(random);
                inputs.add(random.nextBoolean() ? "C " + vs + " " + (random.nextBoolean() ? vs : random.nextInt(vs + 1))
                        : "U " + small + " " + random.nextInt(64));
                continue;
            }
            switch (i % 7) {
                case 6 -> inputs.add("R " + (random.nextBoolean() ? random.nextLong(5000)
                        : ValueClasses.blockBytes(random.nextInt(ValueClasses.COUNT))));
                case 0 -> inputs.add("L " + random.nextLong(ValueClasses.MAX_VALUE_BYTES + 100L));
                case 1 -> inputs.add("L " + random.nextLong(5000));
                case 2 -> inputs.add("H " + random.nextInt(ValueClasses.MAX_VALUE_BYTES + 1) + " " + random.nextLong(1L << 32));
                case 3 -> inputs.add(String.format(Locale.ROOT, "W %016x %d", random.nextBoolean() ? random.nextLong()
                                : ValueBlockHeader.make(random.nextInt(5000), random.nextInt()),
                        random.nextInt(ValueClasses.COUNT)));
                case 4 -> inputs.add(String.format(Locale.ROOT, "F %d %d %d %d", random.nextBoolean() ? 2 : 3,
                        random.nextBoolean() ? 1 + random.nextInt(8000) : ValueClasses.blockBytes(random.nextInt(80)),
                        2 + random.nextInt(0xFFFE),
                        SlotMetaV3.OFFSET_UNIT * (1 + random.nextLong(SlotMetaV3.MAX_OFFSET / SlotMetaV3.OFFSET_UNIT))));
                default -> inputs.add(String.format(Locale.ROOT, "M %d %d %d", 2 + random.nextInt(0xFFFE),
                        random.nextInt(ValueClasses.COUNT), SlotMetaV3.OFFSET_UNIT * (1 + random.nextLong(
                                SlotMetaV3.MAX_OFFSET / SlotMetaV3.OFFSET_UNIT))));
            }
        }
        List<String> out = CHECKER.run(inputs);
        for (int i = 0; i < inputs.size(); i++) {
            assertEquals(javaLine(inputs.get(i)), out.get(i), "input " + inputs.get(i));
        }
    }

    /** A class whose blocks share segments (at most {@link SizeClassHeap#SMALL_BLOCK_MAX} bytes). */
    private static int smallClass(SplittableRandom random) {
        for (;;) {
            int c = random.nextInt(ValueClasses.COUNT);
            if (ValueClasses.blockBytes(c) <= SizeClassHeap.SMALL_BLOCK_MAX) {
                return c;
            }
        }
    }

    /** What the Java side answers to one question, in the checker's format. */
    static String javaLine(String input) {
        String[] f = input.split(" ");
        switch (f[0]) {
            case "B":
                return Integer.toString(ValueClasses.blockBytes(Integer.parseInt(f[1])));
            case "L": {
                long length = Long.parseLong(f[1]);
                return Integer.toString(length > ValueClasses.MAX_VALUE_BYTES ? -1 : ValueClasses.classOf(length));
            }
            case "R":
                return Integer.toString(ValueClasses.bareClassOf(Long.parseLong(f[1])));
            case "M": {
                long m = SlotMetaV3.make(Integer.parseInt(f[1]), Integer.parseInt(f[2]), Long.parseLong(f[3]));
                return String.format(Locale.ROOT, "%016x %d %d %d", m, SlotMetaV3.fingerprint(m), SlotMetaV3.valueClass(m),
                        SlotMetaV3.valueOffset(m));
            }
            case "H": {
                long h = ValueBlockHeader.make(Integer.parseInt(f[1]), (int) Long.parseLong(f[2]));
                return String.format(Locale.ROOT, "%016x %d %s", h, ValueBlockHeader.length(h),
                        Integer.toUnsignedString(ValueBlockHeader.checksum(h)));
            }
            case "W":
                return ValueBlockHeader.wholeIn(Long.parseUnsignedLong(f[1], 16), Integer.parseInt(f[2])) ? "1" : "0";
            case "F": {
                // What the CPU engine makes and reads for the same pool: the kernels must agree.
                int version = Integer.parseInt(f[1]);
                int valueSize = Integer.parseInt(f[2]);
                MetaFormat meta = MetaFormat.of(version);
                ValueFormat values = ValueFormat.of(version, valueSize, false);  // the GPU engine refuses item checksums
                int fullClass = values.classOf(valueSize);
                long m = meta.make(Integer.parseInt(f[3]), fullClass, Long.parseLong(f[4]));
                long block = meta.valueOffset(m);
                int wordClass = version == 3 ? meta.valueClass(m) : -1;  // what recovery marks a block by
                boolean framed = version == 3 && !ValueClasses.isBare(fullClass);
                long header = framed ? ValueBlockHeader.make(valueSize, 0) : 0;
                return String.format(Locale.ROOT, "%016x %d %d %d %016x", m, block, values.valueAt(block, fullClass),
                        wordClass, header);
            }
            case "C": {
                // What the CPU engine's format 3 pool gives the length (the GPU engine keeps no item checksums).
                int valueSize = Integer.parseInt(f[1]);
                return Integer.toString(ValueFormat.v3(valueSize, true).classOf(Integer.parseInt(f[2])));
            }
            case "U": {
                // Block k of the class starts at 16-byte unit k * block / 16 of its segment (SegmentHeap's numbering).
                int block = ValueClasses.blockBytes(Integer.parseInt(f[1]));
                int word = Integer.parseInt(f[2]);
                long mask = 0;
                for (int k = 0; k < SizeClassHeap.SEGMENT_BYTES / block; k++) {
                    int unit = k * block / 16;
                    if (unit / 64 == word) {
                        mask |= 1L << (unit % 64);
                    }
                }
                return String.format(Locale.ROOT, "%016x", mask);
            }
            default:
                throw new IllegalArgumentException(input);
        }
    }
}
