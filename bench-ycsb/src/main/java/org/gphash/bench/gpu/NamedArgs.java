package org.gphash.bench.gpu;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The GPU benchmarks' arguments: {@code --name value} pairs, after leading positional words (a
 * mode). Names are looked up with a default, numbers may carry underscores ({@code 1_048_576}).
 */
record NamedArgs(List<String> positional, Map<String, String> named) {

    /**
     * Parses {@code args}: the first {@code positional} words as they are, then {@code --name value} pairs.
     *
     * @throws IllegalArgumentException naming the argument that is not a pair, or a missing positional word
     */
    static NamedArgs parse(String[] args, int positional, String usage) {
        if (args.length < positional) {
            throw new IllegalArgumentException("usage: " + usage);
        }
        Map<String, String> m = new HashMap<>();
        for (int i = positional; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value, got " + args[i] + " (usage: " + usage + ")");
            }
            m.put(args[i].substring(2), args[i + 1]);
        }
        return new NamedArgs(List.of(args).subList(0, positional), m);
    }

    String get(String name, String fallback) {
        return named.getOrDefault(name, fallback);
    }

    long number(String name, long fallback) {
        return named.containsKey(name) ? Long.parseLong(named.get(name).replace("_", "")) : fallback;
    }

    double real(String name, double fallback) {
        return named.containsKey(name) ? Double.parseDouble(named.get(name)) : fallback;
    }

    List<String> list(String name, String fallback) {
        return List.of(get(name, fallback).split(","));
    }
}
