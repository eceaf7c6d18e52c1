package org.gphash.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.gphash.Geometry;
import org.gphash.OpKind;
import org.gphash.Outcome;
import org.gphash.bktcache.CachePolicy;
import org.gphash.cuda.pipeline.SmallReads;
import org.gphash.cuda.runtime.KernelParams;
import org.gphash.cuda.runtime.Launcher;
import org.gphash.cuda.runtime.ParamStruct;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.gphash.format.SlotMetaV3;
import org.gphash.format.ValueClasses;
import org.gphash.table.SizeClassHeap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The constants, enums and parameter structs that Java and CUDA share, compared from the CUDA headers'
 * text (no GPU needed: this runs in CI). Kernels take their parameters as packed structs of 8-byte
 * fields and report through counter arrays and codes, so a field added on one side only, or an enum
 * renumbered, would corrupt silently; here it fails the build, naming what differs.
 */
class SharedConstantsTest {

    /** The headers, from the module's directory (Maven) or the repository's root (the GPU machine's run). */
    private static final Path HEADERS = Files.isDirectory(Path.of("src/main/cuda/gphash"))
            ? Path.of("src/main/cuda/gphash") : Path.of("cuda/src/main/cuda/gphash");
    private static final Map<String, Long> CONSTANTS = new HashMap<>();
    private static final Map<String, Map<String, Long>> ENUMS = new HashMap<>();
    private static final Map<String, Long> STRUCT_FIELDS = new HashMap<>();
    private static final Map<String, List<String>> STRUCT_FIELD_NAMES = new HashMap<>();

    @BeforeAll
    static void parseHeaders() throws IOException {
        List<Path> files;
        try (var s = Files.walk(HEADERS)) {
            files = s.filter(p -> p.toString().endsWith(".cuh")).sorted().toList();
        }
        assertFalse(files.isEmpty(), "no headers under " + HEADERS.toAbsolutePath());
        List<String> texts = new ArrayList<>();
        for (Path f : files) {
            texts.add(Files.readString(f).replaceAll("//[^\n]*", ""));
        }
        // Constants may refer to others defined in any header: evaluate until nothing new resolves.
        Pattern constant = Pattern.compile("constexpr\\s+[\\w:]+\\s+(k\\w+)\\s*=\\s*([^;]+);");
        for (int round = 0; round < 4; round++) {
            for (String t : texts) {
                Matcher m = constant.matcher(t);
                while (m.find()) {
                    Long v = Expr.eval(m.group(2), CONSTANTS);
                    if (v != null) {
                        CONSTANTS.put(m.group(1), v);
                    }
                }
            }
        }
        Pattern enumDecl = Pattern.compile("enum\\s+(\\w+)\\s*(?::\\s*\\w+)?\\s*\\{([^}]*)}");
        Pattern structDecl = Pattern.compile("struct\\s+(\\w+)\\s*\\{([^}]*)};");
        Pattern field = Pattern.compile("(?:u?int64_t)\\s+(\\w+)(?:\\[(\\w+)])?\\s*;");
        for (String t : texts) {
            Matcher e = enumDecl.matcher(t);
            while (e.find()) {
                Map<String, Long> values = new LinkedHashMap<>();
                long next = 0;
                for (String entry : e.group(2).split(",")) {
                    String x = entry.trim();
                    if (x.isEmpty()) {
                        continue;
                    }
                    String[] kv = x.split("=", 2);
                    long v = kv.length == 2 ? Expr.eval(kv[1].trim(), CONSTANTS) : next;
                    values.put(kv[0].trim(), v);
                    next = v + 1;
                }
                ENUMS.put(e.group(1), values);
            }
            Matcher s = structDecl.matcher(t);
            while (s.find()) {
                long n = 0;
                Matcher f = field.matcher(s.group(2));
                List<String> names = new ArrayList<>();
                while (f.find()) {
                    n += f.group(2) == null ? 1 : CONSTANTS.get(f.group(2));
                    names.add(f.group(2) == null ? f.group(1) : f.group(1) + "[" + CONSTANTS.get(f.group(2)) + "]");
                }
                STRUCT_FIELDS.put(s.group(1), n);
                STRUCT_FIELD_NAMES.put(s.group(1), names);
            }
        }
    }

    private static long c(String name) {
        Long v = CONSTANTS.get(name);
        assertTrue(v != null, "no constant " + name + " in the CUDA headers");
        return v;
    }

    private static long e(String enumName, String entry) {
        Map<String, Long> m = ENUMS.get(enumName);
        assertTrue(m != null && m.containsKey(entry), "no " + enumName + "::" + entry + " in the CUDA headers");
        return m.get(entry);
    }

    private static long fields(String struct) {
        Long v = STRUCT_FIELDS.get(struct);
        assertTrue(v != null, "no struct " + struct + " in the CUDA headers");
        return v;
    }

    @Test
    void parameterStructsHaveTheWordsJavaPacks() {
        assertEquals(KernelParams.TABLE_BYTES / 8, fields("TableParams"), "TableParams");
        assertEquals(KernelParams.BATCH_FIELDS, fields("BatchParams"), "BatchParams");
        assertEquals(KernelParams.SCAN_FIELDS, fields("ScanParams"), "ScanParams");
        assertEquals(KernelParams.CACHE_FIELDS, fields("CacheParams"), "CacheParams");
        assertEquals(KernelParams.LOAD_FIELDS, fields("LoadParams"), "LoadParams");
        assertEquals(KernelParams.PIPE_BATCH_FIELDS, fields("PipeBatch"), "PipeBatch");
        assertEquals(KernelParams.PIPE_FIELDS, fields("PipeParams"), "PipeParams");
        assertEquals(KernelParams.HEAP_FIELDS, fields("HeapParams"), "HeapParams");
        assertEquals(9, fields("SortPass"), "SortPass (KernelParams.sortPass packs nine)");
        assertEquals(4, fields("ScanArgs"), "ScanArgs (KernelParams.scanArgs packs four)");
        assertEquals(SmallReads.ARGS_FIELDS, fields("SmallReadsArgs"), "SmallReadsArgs");
        assertEquals(KernelParams.PART_GATHER_FIELDS, fields("PartGather"), "PartGather");
        assertEquals(KernelParams.PART_SCATTER_FIELDS, fields("PartScatter"), "PartScatter");
        assertEquals(KernelParams.SHARD_SPLIT_FIELDS, fields("ShardSplit"), "ShardSplit");
        assertEquals(KernelParams.PIPE_FIELDS * 8, KernelParams.longs(new long[KernelParams.PIPE_FIELDS]).length);
    }

    /** Every struct Java packs, as a descriptor of its fields. */
    private static final List<ParamStruct> JAVA_STRUCTS = List.of(KernelParams.TABLE, KernelParams.BATCH, KernelParams.SCAN,
            KernelParams.CACHE, KernelParams.LOAD, KernelParams.HEAP, KernelParams.SORT_PASS, KernelParams.SCAN_ARGS,
            KernelParams.PART_GATHER, KernelParams.PART_SCATTER, KernelParams.PACKED_COLUMN, KernelParams.SHARD_SPLIT,
            KernelParams.PIPE_BATCH, KernelParams.PIPE, SmallReads.ARGS);

    /**
     * Issue 54: each parameter struct field by field, by name and order (the count alone let two
     * fields trade places unseen), and every struct a kernel takes by value has a Java descriptor.
     */
    @Test
    void parameterStructsAgreeFieldByField() throws IOException {
        for (ParamStruct j : JAVA_STRUCTS) {
            List<String> cuda = STRUCT_FIELD_NAMES.get(j.cudaName());
            assertTrue(cuda != null, "no struct " + j.cudaName() + " in the CUDA headers");
            assertEquals(cuda, j.fields(), j.cudaName() + ": the CUDA header's fields, then Java's");
        }
        List<String> described = JAVA_STRUCTS.stream().map(ParamStruct::cudaName).toList();
        for (Kernel k : kernels()) {
            for (String type : k.parameterTypes()) {
                if (STRUCT_FIELD_NAMES.containsKey(type)) {
                    assertTrue(described.contains(type), k.name() + " takes a " + type + ", which Java does not describe");
                }
            }
        }
    }

    /** Issue 54: the extern "C" entries and the names the host loads are the same set. */
    @Test
    void everyKernelEntryIsLoadedByNameAndEveryNameExists() throws IOException {
        java.util.Set<String> entries = new java.util.TreeSet<>();
        for (Kernel k : kernels()) {
            entries.add(k.name());
        }
        java.util.Set<String> loaded = new java.util.TreeSet<>();
        Path java = HEADERS.getParent().getParent().resolve("java");
        Pattern literal = Pattern.compile("\"(gphash_[a-z0-9_]+)\"");
        try (var files = Files.walk(java)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                Matcher m = literal.matcher(Files.readString(f));
                while (m.find()) {
                    loaded.add(m.group(1));
                }
            }
        }
        assertTrue(entries.size() > 40, "found " + entries.size() + " entries");
        assertEquals(entries, loaded, "extern \"C\" entries of gphash_kernels.cu, then the names Java loads");
    }

    record Kernel(String name, List<String> parameterTypes) {
    }

    private static List<Kernel> kernels() throws IOException {
        String cu = Files.readString(HEADERS.getParent().resolve("gphash_kernels.cu")).replaceAll("//[^\n]*", "");
        Matcher m = Pattern.compile("extern\\s+\"C\"\\s+__global__\\s+void\\s+(?:__launch_bounds__\\([^)]*\\)\\s+)?"
                + "(\\w+)\\s*\\(([^)]*)\\)").matcher(cu);
        List<Kernel> out = new ArrayList<>();
        while (m.find()) {
            List<String> types = new ArrayList<>();
            for (String param : m.group(2).split(",")) {
                String[] words = param.trim().split("\\s+");
                if (words.length >= 2) {
                    types.add(words[words.length - 2].replace("const", "").trim());
                }
            }
            out.add(new Kernel(m.group(1), types));
        }
        return out;
    }

    /** Issue 54: the small writes' flag word was unchecked. */
    @Test
    void flagWordsAgree() {
        assertEquals(KernelParams.SMALL_READS, c("kSmallReads"));
        assertEquals(KernelParams.SMALL_WRITES, c("kSmallWrites"));
        assertEquals(KernelParams.SMALL_CACHE_ON, c("kSmallCacheOn"));
    }

    @Test
    void limitsAgree() {
        assertEquals(KernelParams.MAX_LEVELS, c("kMaxLevels"));
        assertEquals(Geometry.MAX_LEVELS + PoolHeader.MAX_EXTRA_LEVELS, c("kMaxLevels"),
                "a resize in progress may add extra levels; kernels must hold them all");
        assertEquals(KernelParams.MAX_HASHES, c("kMaxHashes"));
        assertEquals(Geometry.MAX_HASHES, c("kMaxHashes"));
        assertEquals(KernelParams.MAX_CACHE_ENTRIES, c("kEntryMask"));
        assertEquals(KernelParams.ADDRESS_BINS, c("kAddressBins"));
        assertEquals(KernelParams.SPLIT_WRITES, c("kSplitWrites"));
        assertEquals(KernelParams.SPLIT_READS, c("kSplitReads"));
        assertEquals(KernelParams.SPLIT_REFUSED, c("kSplitRefused"));
        assertEquals(KernelParams.SPLIT_TOTALS, c("kSplitTotals"));
        assertEquals(Launcher.BLOCK, c("kSmallWritesThreads"), "the one-launch small writes run one block of Launcher.BLOCK");
        assertEquals(org.gphash.GpuTuning.SMALL_WRITES_LIMIT, c("kSmallWritesMax"), "GpuTuning.smallWritesMax's limit is the kernel's");
        assertEquals(KernelParams.SCAN_TILE, c("kScanTile"));
        assertEquals(KernelParams.SORT_TILE, c("kSortTile"));
        assertEquals(KernelParams.RADIX, c("kRadix"));
        assertEquals(Launcher.BLOCK, c("kScanThreads"), "scans assume Launcher's block size");
        assertEquals(Launcher.BLOCK, c("kSortThreads"), "the sort assumes Launcher's block size");
        assertEquals(KernelParams.BLOCK_SORT_MAX, c("kBlockSortMax"), "RadixSort routes runs up to it to the one-block sort");
        assertEquals(KernelParams.SMALL_SCAN_MAX, c("kSmallScanMax"), "DeviceScan routes scans up to it to one block");
    }

    @Test
    void slotWordsAgree() {
        assertEquals(SlotMeta.EMPTY, c("kEmpty"));
        assertEquals(SlotMeta.INSERT, c("kInsertState"));
        assertEquals(SlotMeta.OFFSET_MASK, c("kOffsetMask"));
        assertEquals(SlotMeta.FIRST_VALID_FINGERPRINT, c("kFirstValidFingerprint"));
        assertEquals(SlotMeta.fingerprint(SlotMeta.EMPTY), c("kTagEmpty"), "a tag is its meta word's fingerprint field");
        assertEquals(SlotMeta.fingerprint(SlotMeta.INSERT), c("kTagInsert"));
    }

    /** Format 3's layout (issue 53): the size classes and the meta word with a class field. */
    @Test
    void formatThreeWordsAgree() {
        assertEquals(ValueClasses.HEADER_BYTES, c("kValueHeaderBytes"));
        assertEquals(ValueClasses.COUNT, c("kValueClassCount"));
        assertEquals(ValueClasses.SIZES, c("kValueSizeCount"));
        assertEquals(ValueClasses.MAX_BLOCK_BYTES, c("kMaxBlockBytes"));
        assertEquals(SlotMetaV3.OFFSET_BITS, c("kMetaV3OffsetBits"));
        assertEquals(SlotMetaV3.OFFSET_UNIT, c("kMetaV3OffsetUnit"));
        assertEquals((1L << SlotMetaV3.OFFSET_BITS) - 1, c("kMetaV3UnitsMask"));
    }

    /** Format 3's heap on the GPU (pipeline/heap_segments.cuh): segments, units and the state words the host reads. */
    @Test
    void segmentHeapWordsAgree() {
        assertEquals(SizeClassHeap.SEGMENT_BYTES, c("kSegmentBytes"));
        assertEquals(KernelParams.SEGMENT_WORDS, c("kSegmentWords"));
        assertEquals(SizeClassHeap.SEGMENT_BYTES / 16 / 64, KernelParams.SEGMENT_WORDS);
        assertEquals(KernelParams.SEG_TOP, c("kSegTop"));
        assertEquals(KernelParams.SEG_HELD_FREE, c("kSegHeldFree"));
        assertEquals(KernelParams.SEG_TOP_BEFORE, c("kSegTopBefore"));
        assertEquals(KernelParams.SEG_POPPED, c("kSegPopped"));
        assertEquals(KernelParams.SEG_FRESH, c("kSegFresh"));
        assertEquals(KernelParams.SEG_HELD_TAKEN, c("kSegHeldTaken"));
        assertEquals(KernelParams.SEG_STATE_WORDS, c("kSegStateWords"));
    }

    @Test
    void kindsOutcomesAndPoliciesAgree() {
        Map<String, Long> kinds = ENUMS.get("OpKind");
        assertEquals(OpKind.values().length, kinds.size(), "OpKind entries: " + kinds);
        String[] names = {"kGet", "kPut", "kInsert", "kUpdate", "kDelete", "kReadModifyWrite", "kCompareAndSet",
            "kCompareAndDelete"};
        for (OpKind k : OpKind.values()) {
            assertEquals(k.ordinal(), e("OpKind", names[k.ordinal()]), k.name());
        }
        // NOT_APPLIED is code 0, what the kernels call kRetry: an operation that has not completed.
        String[] outcomes = {"kRetry", "kFound", "kNotFound", "kInserted", "kUpdated", "kExists", "kDeleted", "kReplaced"};
        for (Outcome o : Outcome.values()) {
            assertEquals(o.code(), e("Outcome", outcomes[o.ordinal()]), o.name());
        }
        assertEquals(KernelParams.NEED_RESIZE_CODE, e("Outcome", "kNeedResize"));
        assertEquals(KernelParams.CONSUMED_FLAG, c("kConsumedFlag"));
        assertEquals(0, KernelParams.CONSUMED_FLAG & KernelParams.NEED_RESIZE_CODE);
        String[] policies = {"kLfu", "kLru", "kRandom"};
        for (CachePolicy p : CachePolicy.values()) {
            assertEquals(p.ordinal(), e("CachePolicyKind", policies[p.ordinal()]), p.name());
        }
    }

    @Test
    void countersAgree() {
        assertEquals(KernelParams.RETIRED_COUNT, e("Counter", "kRetiredCount"));
        assertEquals(KernelParams.ITEMS_ADDED, e("Counter", "kItemsAdded"));
        assertEquals(KernelParams.ITEMS_REMOVED, e("Counter", "kItemsRemoved"));
        assertEquals(KernelParams.NEED_RESIZE, e("Counter", "kNeedResizeCount"));
        assertEquals(KernelParams.COUNTERS, e("Counter", "kCounterCount"));
        assertEquals(KernelParams.INSERT_CLEARED, e("ScanCounter", "kInsertCleared"));
        assertEquals(KernelParams.TORN_CLEARED, e("ScanCounter", "kTornCleared"));
        assertEquals(KernelParams.DUPLICATES_CLEARED, e("ScanCounter", "kDuplicatesCleared"));
        assertEquals(KernelParams.ITEMS, e("ScanCounter", "kItems"));
        assertEquals(KernelParams.BAD_OFFSETS, e("ScanCounter", "kBadOffsets"));
        assertEquals(KernelParams.SHARED_BLOCKS, e("ScanCounter", "kSharedBlocks"));
        assertEquals(KernelParams.MOVED, e("ScanCounter", "kMoved"));
        assertEquals(KernelParams.UNPLACED, e("ScanCounter", "kUnplaced"));
        assertEquals(KernelParams.SCAN_JUDGE_ONLY, e("ScanMode", "kScanJudgeOnly"));
        assertEquals(KernelParams.SCAN_VALID_ONLY, e("ScanMode", "kScanValidOnly"));
        assertEquals(KernelParams.SCAN_BY_CLASS, e("ScanMode", "kScanByClass"));
        assertEquals(KernelParams.SCAN_RETIRED, e("ScanCounter", "kScanRetired"));
        assertEquals(KernelParams.OTHER_CLASSES, e("ScanCounter", "kOtherClasses"));
        assertEquals(KernelParams.SCAN_COUNTERS, e("ScanCounter", "kScanCounterCount"));
        assertEquals(KernelParams.CACHE_HITS, e("CacheStat", "kCacheHits"));
        assertEquals(KernelParams.CACHE_MISSES, e("CacheStat", "kCacheMisses"));
        assertEquals(KernelParams.CACHE_STATS, e("CacheStat", "kCacheStatCount"));
        assertEquals(KernelParams.LOAD_LOADED, e("LoadState", "kLoaded"));
        assertEquals(KernelParams.LOAD_ABANDONED, e("LoadState", "kAbandoned"));
        assertEquals(KernelParams.LOAD_CHOSEN, e("LoadState", "kChosen"));
        assertEquals(KernelParams.LOAD_STATE, e("LoadState", "kLoadStateCount"));
        String[][] pipe = {
                {"kPipeGroups", "PIPE_GROUPS"}, {"kPipeInserts", "PIPE_INSERTS"}, {"kPipeValueWrites", "PIPE_VALUE_WRITES"},
                {"kPipeDeletes", "PIPE_DELETES"}, {"kPipeDistinct", "PIPE_DISTINCT"}, {"kPipeReads", "PIPE_READS"},
                {"kPipeSlotWrites", "PIPE_SLOT_WRITES"}, {"kPipeSortN", "PIPE_SORT_N"}, {"kPipeUngrouped", "PIPE_UNGROUPED"},
                {"kPipeRepeats", "PIPE_REPEATS"},
                {"kPipeItemsAdded", "PIPE_ITEMS_ADDED"}, {"kPipeItemsRemoved", "PIPE_ITEMS_REMOVED"},
                {"kPipeNeedResize", "PIPE_NEED_RESIZE"}, {"kPipeBlocksTaken", "PIPE_BLOCKS_TAKEN"},
                {"kPipeBlocksFreed", "PIPE_BLOCKS_FREED"}, {"kPipeCacheHits", "PIPE_CACHE_HITS"},
                {"kPipeCacheMisses", "PIPE_CACHE_MISSES"}, {"kPipeHeapShort", "PIPE_HEAP_SHORT"},
                {"kPipeFreeErrors", "PIPE_FREE_ERRORS"}, {"kPipeCounterCount", "PIPE_COUNTERS"}};
        for (String[] p : pipe) {
            assertEquals(javaConstant(p[1]), e("PipeCounter", p[0]), p[0] + " / KernelParams." + p[1]);
        }
    }

    private static long javaConstant(String name) {
        try {
            var f = KernelParams.class.getDeclaredField(name);
            f.setAccessible(true);
            return ((Number) f.get(null)).longValue();
        } catch (ReflectiveOperationException ex) {
            throw new AssertionError("no KernelParams." + name, ex);
        }
    }

    /** Integer expressions as the headers write them: literals with C suffixes, names, ~ << * + - and parentheses. */
    static final class Expr {
        private final String s;
        private final Map<String, Long> names;
        private int i;

        private Expr(String s, Map<String, Long> names) {
            this.s = s.replaceAll("\\s+", "");
            this.names = names;
        }

        /** The value, or null when it names something not (yet) known or is not integer arithmetic. */
        static Long eval(String text, Map<String, Long> names) {
            try {
                Expr e = new Expr(text, names);
                long v = e.shift();
                return e.i == e.s.length() ? v : null;
            } catch (RuntimeException ex) {
                return null;
            }
        }

        private long shift() {
            long v = sum();
            while (s.startsWith("<<", i)) {
                i += 2;
                v <<= sum();
            }
            return v;
        }

        private long sum() {
            long v = product();
            while (i < s.length() && (s.charAt(i) == '+' || (s.charAt(i) == '-'))) {
                char op = s.charAt(i++);
                long r = product();
                v = op == '+' ? v + r : v - r;
            }
            return v;
        }

        private long product() {
            long v = unary();
            while (i < s.length() && s.charAt(i) == '*') {
                i++;
                v *= unary();
            }
            return v;
        }

        private long unary() {
            char ch = s.charAt(i);
            if (ch == '~') {
                i++;
                return ~unary();
            }
            if (ch == '(') {
                i++;
                long v = shift();
                if (s.charAt(i++) != ')') {
                    throw new IllegalArgumentException("unbalanced");
                }
                return v;
            }
            Matcher m = Pattern.compile("0[xX][0-9a-fA-F]+|\\d+|k\\w+").matcher(s);
            if (!m.find(i) || m.start() != i) {
                throw new IllegalArgumentException("no term at " + i);
            }
            String t = m.group();
            i = m.end();
            while (i < s.length() && "uUlL".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            if (t.startsWith("k")) {
                Long v = names.get(t);
                if (v == null) {
                    throw new IllegalArgumentException("unknown " + t);
                }
                return v;
            }
            return t.startsWith("0x") || t.startsWith("0X") ? Long.parseUnsignedLong(t.substring(2), 16) : Long.parseLong(t);
        }
    }
}
