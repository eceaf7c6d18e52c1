package org.gphash;

import java.util.List;
import java.util.Objects;

/**
 * Where an index lives: one pool file, or a directory of shards, each a pool of its own (issue 30),
 * and on which GPUs the GPU engine runs them. Set with {@link GPHashIndex.Builder#shards(int)} and
 * {@link GPHashIndex.Builder#devices(int...)}.
 *
 * <p>A sharded index sends each key to one shard by a hash of its own (independent of the table's
 * hashes; its seed is in the directory's manifest), so a shard is a whole GPHash table: {@code gphash
 * check} and the other tools read each shard pool as they read any pool. The API opens a shard only
 * as part of its index (a shard opened alone is refused: keys written to it would be unreachable). On
 * the GPU engine shard {@code i} runs on {@code devices.get(i % devices.size())}; with no devices
 * named, on GPU {@code i % (GPUs visible)}. The CPU engine ignores the devices.
 *
 * @param shards  0: one pool file at the path; 1 or more: a directory at the path holding that many
 *                shard pools and a manifest (on open, 0 takes the manifest's count and a count given
 *                must match it)
 * @param devices GPU ordinals (as the CUDA driver numbers them); empty: GPU 0 for one pool, every
 *                visible GPU for shards
 */
public record Placement(int shards, List<Integer> devices) {

    /** The most shards an index may have. */
    public static final int MAX_SHARDS = 256;

    /** One pool file on GPU 0 (the GPU engine) or the CPU: the default. */
    public static final Placement SINGLE_POOL = new Placement(0, List.of());

    /** Checks the fields: each names what is wrong in its exception. */
    public Placement {
        if (shards < 0 || shards > MAX_SHARDS) {
            throw new IllegalArgumentException("shards must be 1 to " + MAX_SHARDS + " (or 0: one pool file), got " + shards);
        }
        devices = List.copyOf(Objects.requireNonNull(devices, "devices"));
        for (int d : devices) {
            if (d < 0) {
                throw new IllegalArgumentException("a GPU ordinal is 0 or more, got " + d + " in devices " + devices);
            }
        }
        if (devices.stream().distinct().count() != devices.size()) {
            throw new IllegalArgumentException("devices names a GPU twice: " + devices);
        }
    }

    /** {@return whether the path is a directory of shards rather than one pool file} */
    public boolean sharded() {
        return shards > 0;
    }

    /**
     * The GPU that runs shard {@code shard}.
     *
     * @param shard   the shard's number
     * @param visible the GPUs the driver sees (used when no devices are named)
     * @return its GPU ordinal
     */
    public int deviceOf(int shard, int visible) {
        if (!devices.isEmpty()) {
            return devices.get(shard % devices.size());
        }
        return visible <= 0 ? 0 : shard % visible;
    }

    /** {@return the GPU a single pool runs on: the first device named, or GPU 0} */
    public int device() {
        return devices.isEmpty() ? 0 : devices.get(0);
    }

    /**
     * The placement of one shard's pool: a single pool on one GPU.
     *
     * @param device its GPU ordinal
     * @return the placement
     */
    public static Placement onDevice(int device) {
        return new Placement(0, List.of(device));
    }
}
