package org.gphash.cuda;

import static org.gphash.cuda.GpuTestSupport.key;
import static org.gphash.cuda.GpuTestSupport.value;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.bktcache.BktCacheConfig;

/**
 * The process {@link KillDuringGpuBatchTest} kills: round after round it PUTs every key of its key
 * space with the round's version through the GPU engine, and only after a round's batch has
 * returned appends the round number to the acknowledgement file and forces it.
 *
 * <p>Arguments: pool path, ack file path, number of keys.
 */
public final class GpuBatchWorker {

    private GpuBatchWorker() {
    }

    public static void main(String[] args) throws IOException {
        Path pool = Path.of(args[0]);
        Path ack = Path.of(args[1]);
        int keys = Integer.parseInt(args[2]);
        // BktCache loads every half round, on their own stream, so kills land in loads as well.
        BktCacheConfig cache = BktCacheConfig.builder().share(0.4).reloadEveryOperations(Math.max(1, keys / 2)).build();
        try (GpuEngine gpu = GpuEngines.create(GpuTestSupport.config(pool, 8, 2, 2, 8, 1024, 61, cache));
             FileChannel log = FileChannel.open(ack, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                     StandardOpenOption.APPEND)) {
            Batch batch = Batch.create(8, GpuTestSupport.VALUE_SIZE, keys);
            Batch reads = Batch.create(8, GpuTestSupport.VALUE_SIZE, keys);
            BatchResult result = new BatchResult(GpuTestSupport.VALUE_SIZE, keys);
            System.out.println("worker ready");
            System.out.flush();
            for (long round = 1; ; round++) {
                batch.clear();
                for (long k = 0; k < keys; k++) {
                    // Deletes and re-inserts along the way keep reclamation and resizes busy.
                    if (round % 3 == 0 && k % 7 == 0) {
                        batch.delete(key(k, 8));
                    } else {
                        batch.put(key(k, 8), value(k, round));
                    }
                }
                gpu.execute(batch, result);
                // Reads of a fifth of the keys go through the cache and feed its counters.
                reads.clear();
                for (long k = 0; k < keys; k += 5) {
                    reads.get(key(k, 8));
                }
                gpu.execute(reads, result);
                log.write(ByteBuffer.wrap((round + "\n").getBytes()));
                log.force(true);
            }
        }
    }
}
