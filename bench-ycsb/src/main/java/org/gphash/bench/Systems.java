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
 * default PER_BATCH: what per-operation durability costs, in the same run), and
 * {@code gphash-gpu-device} (alias {@code gpu-device}: the GPU engine on batches resident in GPU
 * memory, as a GPU application issues them; a replay times only the engine, see
 * {@link GPHashStore#deviceResident()}), and {@code client} (no store: the client's own ceiling).
 */
public final class Systems {

    public static final List<String> BASELINES = List.of("cpu-assisted", "chm", "lmdb", "gphash-per-op");

    /** Named on request only: no store, the client alone (see {@link ClientOnlyStore}). */
    public static final String CLIENT = "client";

    /** Named on request only ("all" means the baselines above): it needs a GPU. */
    public static final String GPU_DEVICE = "gphash-gpu-device";

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
            } else if (name.equals("gpu-device")) {
                name = "gphash-gpu-device";
            }
            if (!BASELINES.contains(name) && !name.equals(GPU_DEVICE) && !name.equals(CLIENT)) {
                throw new IllegalArgumentException("unknown baseline '" + part + "' (" + String.join(", ", BASELINES) + ", gpu-device, client"
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
            case GPU_DEVICE -> new DeviceResidentStore(config);
            case "cpu-assisted" -> new CpuAssistedStore(config, DeviceTransfer.load());
            case "chm" -> new ConcurrentMapStore(config);
            case CLIENT -> new ClientOnlyStore(config);
            case "lmdb" -> new LmdbStore(config);
            case ClusterStore.NAME -> new ClusterStore(config);
            default -> throw new IllegalArgumentException("unknown system " + name);
        };
    }
}
