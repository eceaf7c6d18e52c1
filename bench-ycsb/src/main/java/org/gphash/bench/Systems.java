package org.gphash.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.gphash.Backend;

/**
 * The systems a run can compare, by name. The engine under test (GPHash on the chosen backend)
 * always runs; {@code --baselines} adds others: {@code cpu-assisted} (the CPU engine with a GPU
 * application's copies), {@code chm} (ConcurrentHashMap), {@code lmdb}, and {@code gphash-per-op}
 * (the CPU engine with {@link org.gphash.Durability#PER_OPERATION}, against the engine under test's
 * default PER_BATCH: what per-operation durability costs, in the same run).
 */
public final class Systems {

    public static final List<String> BASELINES = List.of("cpu-assisted", "chm", "lmdb", "gphash-per-op");

    private Systems() {
    }

    /** "none", "all" or a comma-separated list of baseline names. */
    public static List<String> parseBaselines(String text) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        if (t.isEmpty() || t.equals("none")) {
            return List.of();
        }
        if (t.equals("all")) {
            return BASELINES;
        }
        List<String> names = new ArrayList<>();
        for (String part : t.split(",")) {
            String name = part.strip();
            if (name.equals("cpu")) {
                name = "cpu-assisted";
            }
            if (!BASELINES.contains(name)) {
                throw new IllegalArgumentException("unknown baseline '" + part + "' (" + String.join(", ", BASELINES)
                        + ", all or none)");
            }
            if (!names.contains(name)) {
                names.add(name);
            }
        }
        return names;
    }

    /** The engine under test first, then the baselines. */
    public static List<String> systems(Backend backend, List<String> baselines) {
        List<String> all = new ArrayList<>();
        all.add(backend == Backend.GPU ? "gphash-gpu" : "gphash-cpu");
        all.addAll(baselines);
        return all;
    }

    /** Opens a fresh store of the named system. */
    public static StoreUnderTest open(String name, StoreConfig config) throws Exception {
        return switch (name) {
            case "gphash-cpu" -> new GPHashStore(config, Backend.CPU);
            case "gphash-per-op" -> new GPHashStore(config, Backend.CPU, org.gphash.Durability.PER_OPERATION);
            case "gphash-gpu" -> new GPHashStore(config, Backend.GPU);
            case "cpu-assisted" -> new CpuAssistedStore(config, DeviceTransfer.load());
            case "chm" -> new ConcurrentMapStore(config);
            case "lmdb" -> new LmdbStore(config);
            default -> throw new IllegalArgumentException("unknown system " + name);
        };
    }
}
