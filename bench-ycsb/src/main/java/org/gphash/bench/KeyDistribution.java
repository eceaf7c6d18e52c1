package org.gphash.bench;

import java.util.Locale;
import java.util.SplittableRandom;

import org.gphash.cli.ZipfianGenerator;

/**
 * How a workload picks which existing key an operation touches (YCSB's
 * {@code requestdistribution}): zipfian over the loaded keys, uniform, or "latest" (zipfian
 * counted back from the most recently inserted key, YCSB's skewed-latest, used by workload D).
 *
 * <p>Keys are ids: the load phase inserts ids {@code 0 .. loaded-1}; later inserts take the next
 * ids. {@code existing} is how many ids exist when a pick is made.
 */
public sealed interface KeyDistribution {

    /** An id in {@code [0, existing)}. */
    long next(SplittableRandom random, long existing);

    String describe();

    /** zipfian, uniform or latest, as given to {@code --distribution}. */
    static KeyDistribution parse(String name, long loaded, double theta) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "zipfian" -> new Zipfian(new ZipfianGenerator(loaded, theta));
            case "uniform" -> new Uniform();
            case "latest" -> new Latest(new ZipfianGenerator(loaded, theta));
            default -> throw new IllegalArgumentException("unknown distribution '" + name
                    + "' (zipfian, uniform or latest)");
        };
    }

    /**
     * Zipfian over the loaded keys: rank 0 (the hottest) is id 0. YCSB scrambles ranks with a
     * hash so hot keys are not neighbours; a hash index hashes every key anyway, so we do not.
     */
    record Zipfian(ZipfianGenerator zipf) implements KeyDistribution {
        @Override
        public long next(SplittableRandom random, long existing) {
            return Math.min(zipf.next(random), existing - 1);
        }

        @Override
        public String describe() {
            return "zipfian (theta " + zipf.theta() + ")";
        }
    }

    record Uniform() implements KeyDistribution {
        @Override
        public long next(SplittableRandom random, long existing) {
            return random.nextLong(existing);
        }

        @Override
        public String describe() {
            return "uniform";
        }
    }

    /**
     * The newest keys are the hottest: {@code existing - 1 - zipfian rank}. The zipfian generator
     * is sized for the loaded keys; ranks past the oldest key wrap onto the old keys.
     */
    record Latest(ZipfianGenerator zipf) implements KeyDistribution {
        @Override
        public long next(SplittableRandom random, long existing) {
            long back = zipf.next(random) % existing;
            return existing - 1 - back;
        }

        @Override
        public String describe() {
            return "latest (zipfian theta " + zipf.theta() + " from the newest key)";
        }
    }
}
