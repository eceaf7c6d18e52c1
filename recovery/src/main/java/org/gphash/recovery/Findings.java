package org.gphash.recovery;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Counts of each {@link Problem} with the first few occurrences spelled out: a damaged pool may
 * have millions of bad slots, and a report that lists them all helps nobody.
 */
public final class Findings {

    static final int EXAMPLES_PER_KIND = 5;

    private final Map<Problem, Long> counts = new EnumMap<>(Problem.class);
    private final Map<Problem, List<String>> examples = new EnumMap<>(Problem.class);

    void add(Problem kind, String detail) {
        counts.merge(kind, 1L, Long::sum);
        List<String> list = examples.computeIfAbsent(kind, k -> new ArrayList<>());
        if (list.size() < EXAMPLES_PER_KIND) {
            list.add(detail);
        }
    }

    public long count(Problem kind) {
        return counts.getOrDefault(kind, 0L);
    }

    public List<String> examples(Problem kind) {
        return Collections.unmodifiableList(examples.getOrDefault(kind, List.of()));
    }

    /** {@return kinds found at least once, in declaration order} */
    public List<Problem> kinds() {
        return List.copyOf(counts.keySet());
    }

    /** {@return whether no kind that makes a pool unsound was found} */
    public boolean sound() {
        return counts.keySet().stream().noneMatch(Problem::problem);
    }
}
