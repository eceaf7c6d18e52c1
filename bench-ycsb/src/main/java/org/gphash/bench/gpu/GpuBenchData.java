package org.gphash.bench.gpu;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

import org.gphash.cli.ZipfianGenerator;

/** What the GPU benchmarks' batches hold: 8-byte keys, values that name their key and version, zipfian keys. */
final class GpuBenchData {

    private GpuBenchData() {
    }

    static byte[] key(long k) {
        byte[] b = new byte[8];
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(0, k);
        return b;
    }

    static byte[] value(long k, long version, int size) {
        byte[] v = new byte[size];
        ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(0, k);
        if (size >= 16) {
            b.putLong(8, version);
        }
        return v;
    }

    /**
     * Zipf-distributed keys of {@code [0, n)} ({@link ZipfianGenerator}, any skew), with the hot ranks
     * spread over the key space and so over buckets.
     */
    static final class ZipfKeys {
        private final ZipfianGenerator ranks;
        private final long n;

        ZipfKeys(long n, double theta) {
            this.n = n;
            this.ranks = new ZipfianGenerator(n, theta);
        }

        long next(SplittableRandom r) {
            long rank = ranks.next(r);
            // An odd multiplier is a bijection modulo a power of two; other sizes take a hash (a few collisions).
            long x = rank * 0x9E3779B97F4A7C15L;
            return Long.bitCount(n) == 1 ? x & (n - 1) : Math.floorMod(x ^ (x >>> 29), n);
        }
    }
}
