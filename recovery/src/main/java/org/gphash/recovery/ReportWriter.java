package org.gphash.recovery;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.gphash.cli.Json;
import org.gphash.format.HeapChunk;
import org.gphash.format.PoolHeader;

/** Renders a {@link PoolReport} as text for people or JSON for scripts, for check and stats. */
final class ReportWriter {

    private ReportWriter() {
    }

    static String checkText(PoolReport r) {
        StringBuilder sb = new StringBuilder();
        sb.append("pool ").append(r.path()).append('\n');
        if (r.header() != null) {
            PoolHeader h = r.header();
            sb.append(String.format(Locale.ROOT, "  header: sequence %d, copies A=%s B=%s, format %d, %s%n", h.sequence(),
                    copy(r, 0), copy(r, 1), h.formatVersion(), h.geometry()));
            sb.append(String.format(Locale.ROOT, "  slots: %d in %d levels, items %d; value blocks %d, used %d, free %d%n",
                    r.slots(), r.levels().size(), r.items(), r.valueBlocks(), r.valueBlocksUsed(),
                    r.valueBlocks() - r.valueBlocksUsed()));
        }
        Findings f = r.findings();
        for (Problem p : f.kinds()) {
            sb.append(p.problem() ? "  PROBLEM " : "  note    ").append(p.name()).append(" x").append(f.count(p))
                    .append(": ").append(p.description()).append('\n');
            for (String e : f.examples(p)) {
                sb.append("      ").append(e).append('\n');
            }
            if (f.count(p) > f.examples(p).size()) {
                sb.append("      ... and ").append(f.count(p) - f.examples(p).size()).append(" more\n");
            }
        }
        sb.append(r.sound() ? "check: sound\n" : "check: NOT sound (" + advice(r) + ")\n");
        return sb.toString();
    }

    /** What to run about an unsound pool. */
    static String advice(PoolReport r) {
        if (r.findings().count(Problem.NOT_A_POOL) > 0) {
            return "this is not a gphash pool (or one of another format version): there is nothing to repair";
        }
        if (r.findings().count(Problem.OPEN_REFUSES) > 0) {
            return "open refuses this file before reading it: " + r.findings().examples(Problem.OPEN_REFUSES).get(0);
        }
        if (r.header() == null) {
            // Issue 55: this advised 'gphash dump', which refuses a file without a usable header.
            return "neither open nor any tool can read this file (its header is unusable or it is shorter than its "
                    + "header says): restore the pool from a copy, such as one 'gphash snapshot' made";
        }
        if (r.structurallyCorrupt()) {
            return "open refuses this pool and no repair of slots fixes it: 'gphash dump' what can be read (it leaves "
                    + "out and counts what it cannot vouch for), then 'gphash import' it into a new pool";
        }
        if (r.findings().kinds().stream().allMatch(k -> k == Problem.ITEM_CHECKSUM || !k.problem())) {
            return "the items listed fail their checksums: the media changed their values; reads of those keys fail "
                    + "until they are rewritten or deleted";
        }
        if (r.beyondCrash()) {
            return "more damage than a crash leaves, so open refuses this pool: 'gphash recover --force' clears "
                    + "the broken items (they are lost)";
        }
        return "run 'gphash recover' to repair what the crash left";
    }

    private static String copy(PoolReport r, int i) {
        return r.copies().length > i ? r.copies()[i].state() + "(seq " + r.copies()[i].sequence() + ")" : "?";
    }

    static String checkJson(PoolReport r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pool", r.path().toString());
        m.put("sound", r.sound());
        if (!r.sound()) {
            m.put("advice", advice(r));
        }
        m.put("fileBytes", r.fileBytes());
        if (r.header() != null) {
            m.put("header", header(r));
            m.put("items", r.items());
            m.put("slots", r.slots());
            m.put("valueBlocks", r.valueBlocks());
            m.put("valueBlocksUsed", r.valueBlocksUsed());
        }
        List<Object> findings = new ArrayList<>();
        for (Problem p : r.findings().kinds()) {
            Map<String, Object> fm = new LinkedHashMap<>();
            fm.put("kind", p.name());
            fm.put("problem", p.problem());
            fm.put("count", r.findings().count(p));
            fm.put("description", p.description());
            fm.put("examples", r.findings().examples(p));
            findings.add(fm);
        }
        m.put("findings", findings);
        return Json.write(m);
    }

    private static Map<String, Object> header(PoolReport r) {
        PoolHeader h = r.header();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sequence", h.sequence());
        m.put("copyA", r.copies()[0].state());
        m.put("copyB", r.copies()[1].state());
        m.put("keySize", h.geometry().keySize());
        m.put("valueSize", h.geometry().valueSize());
        m.put("levels", h.geometry().levels());
        m.put("hashes", h.geometry().hashes());
        m.put("slotsPerBucket", h.geometry().slotsPerBucket());
        m.put("topLevelLog2", h.topLog2());
        m.put("cleanShutdown", h.cleanShutdown());
        m.put("resizing", h.resizing());
        m.put("resizes", h.resizes());
        m.put("committedBytes", h.fileLength());
        return m;
    }

    static String statsText(PoolReport r) {
        PoolHeader h = r.header();
        StringBuilder sb = new StringBuilder();
        sb.append("pool ").append(r.path()).append('\n');
        sb.append(String.format(Locale.ROOT, "  file: %d bytes (committed %d), %s, resizes %d%n", r.fileBytes(),
                h.fileLength(), h.geometry(), h.resizes()));
        sb.append(String.format(Locale.ROOT, "  size: %d items in %d slots, load factor %.3f%n", r.items(), r.slots(),
                r.loadFactor()));
        for (LevelStats l : r.levels()) {
            sb.append(String.format(Locale.ROOT, "  level depth %d: %d buckets, %d slots, %d items, load factor %.3f%n",
                    l.depth(), l.buckets(), l.slots(), l.items(), l.loadFactor()));
        }
        sb.append("  bucket occupancy (items per bucket: buckets):\n");
        long[] hist = r.histogram();
        long buckets = Arrays.stream(hist).sum();
        for (int i = 0; i < hist.length; i++) {
            int bar = buckets == 0 ? 0 : (int) (50 * hist[i] / buckets);
            sb.append(String.format(Locale.ROOT, "    %2d: %10d %s%n", i, hist[i], "#".repeat(bar)));
        }
        long heapBytes = r.valueBlocks() * r.valueStride();
        sb.append(String.format(Locale.ROOT, "  value heap: %d chunk(s), %d bytes, %d blocks of %d bytes, %d used (%.1f%%), %d free%n",
                h.heapChunks().size(), heapBytes, r.valueBlocks(), r.valueStride(), r.valueBlocksUsed(),
                r.valueBlocks() == 0 ? 0.0 : 100.0 * r.valueBlocksUsed() / r.valueBlocks(),
                r.valueBlocks() - r.valueBlocksUsed()));
        if (!r.sound()) {
            sb.append("  note: the pool is not sound; run 'gphash check' for details\n");
        }
        return sb.toString();
    }

    static String statsJson(PoolReport r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pool", r.path().toString());
        m.put("fileBytes", r.fileBytes());
        m.put("header", header(r));
        m.put("items", r.items());
        m.put("slots", r.slots());
        m.put("loadFactor", r.loadFactor());
        List<Object> levels = new ArrayList<>();
        for (LevelStats l : r.levels()) {
            Map<String, Object> lm = new LinkedHashMap<>();
            lm.put("depth", l.depth());
            lm.put("buckets", l.buckets());
            lm.put("slots", l.slots());
            lm.put("items", l.items());
            lm.put("loadFactor", l.loadFactor());
            lm.put("bucketOccupancy", l.histogram());
            levels.add(lm);
        }
        m.put("levels", levels);
        m.put("bucketOccupancy", r.histogram());
        Map<String, Object> heap = new LinkedHashMap<>();
        heap.put("chunks", r.header().heapChunks().stream().mapToLong(HeapChunk::length).boxed().toList());
        heap.put("blockBytes", r.valueStride());
        heap.put("blocks", r.valueBlocks());
        heap.put("used", r.valueBlocksUsed());
        heap.put("free", r.valueBlocks() - r.valueBlocksUsed());
        m.put("valueHeap", heap);
        m.put("sound", r.sound());
        return Json.write(m);
    }
}
