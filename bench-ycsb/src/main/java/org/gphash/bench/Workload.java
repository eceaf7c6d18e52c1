package org.gphash.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The workloads of the GPHash paper's §4.1: the micro-benchmark (one operation kind each) and the
 * macro-benchmark (the YCSB core workloads without the range-scan workload E). Each is a mix of
 * operation shares; the key of a read, update or read-modify-write comes from the run's
 * {@link KeyDistribution} (workload D always reads the latest keys, as YCSB defines it).
 */
public enum Workload {
    POSITIVE_SEARCH("pos-search", Group.MICRO, 1, 0, 0, 0, 0, 0),
    NEGATIVE_SEARCH("neg-search", Group.MICRO, 0, 1, 0, 0, 0, 0),
    UPDATE("update", Group.MICRO, 0, 0, 1, 0, 0, 0),
    INSERT("insert", Group.MICRO, 0, 0, 0, 1, 0, 0),
    /** Deletes exactly the keys the insert workload added, so the store ends as loaded. */
    DELETE("delete", Group.MICRO, 0, 0, 0, 0, 1, 0),
    /** The load phase itself, measured (YCSB LOAD: 100% inserts). */
    LOAD("load", Group.MACRO, 0, 0, 0, 1, 0, 0),
    C("C", Group.MACRO, 1, 0, 0, 0, 0, 0),
    B("B", Group.MACRO, 0.95, 0, 0.05, 0, 0, 0),
    A("A", Group.MACRO, 0.5, 0, 0.5, 0, 0, 0),
    F("F", Group.MACRO, 0.5, 0, 0, 0, 0, 0.5),
    /** Inserts grow the store, so D runs last. */
    D("D", Group.MACRO, 0.95, 0, 0, 0.05, 0, 0);

    public enum Group { MICRO, MACRO }

    private final String label;
    private final Group group;
    final double read;
    final double negativeRead;
    final double update;
    final double insert;
    final double delete;
    final double readModifyWrite;

    Workload(String label, Group group, double read, double negativeRead, double update, double insert,
             double delete, double readModifyWrite) {
        this.label = label;
        this.group = group;
        this.read = read;
        this.negativeRead = negativeRead;
        this.update = update;
        this.insert = insert;
        this.delete = delete;
        this.readModifyWrite = readModifyWrite;
    }

    public String label() {
        return label;
    }

    public Group group() {
        return group;
    }

    /** Whether the workload picks its read keys with the latest distribution whatever the run's is. */
    boolean readsLatest() {
        return this == D;
    }

    /** The micro workloads in the order they run on one loaded store (insert before delete). */
    public static List<Workload> micro() {
        return List.of(POSITIVE_SEARCH, NEGATIVE_SEARCH, UPDATE, INSERT, DELETE);
    }

    /** The macro workloads in run order: LOAD is the load phase, D (which inserts) last. */
    public static List<Workload> macro() {
        return List.of(LOAD, C, B, A, F, D);
    }

    /** A label (case-insensitive), "micro", "macro" or "all". */
    public static List<Workload> parseList(String text) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        if (t.equals("micro")) {
            return micro();
        }
        if (t.equals("macro")) {
            return macro();
        }
        if (t.equals("all")) {
            return Stream.concat(micro().stream(), macro().stream()).toList();
        }
        ArrayList<Workload> list = new ArrayList<>();
        for (String part : t.split(",")) {
            Workload found = null;
            for (Workload w : values()) {
                if (w.label.equalsIgnoreCase(part.strip()) || w.name().equalsIgnoreCase(part.strip())) {
                    found = w;
                }
            }
            if (found == null) {
                throw new IllegalArgumentException("unknown workload '" + part + "' (micro, macro, all, or a list of "
                        + Arrays.stream(values()).map(Workload::label).toList() + ")");
            }
            if (!list.contains(found)) {
                list.add(found);
            }
        }
        // Keep the run order that leaves every workload valid (insert before delete, D last).
        list.sort(Comparator.comparingInt(Enum::ordinal));
        return list;
    }
}
