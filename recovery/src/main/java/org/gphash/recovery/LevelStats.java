package org.gphash.recovery;

/**
 * Occupancy of one level of the table.
 *
 * @param depth     0 for the top level
 * @param offset    where the level starts in the pool file
 * @param buckets   buckets in the level
 * @param slots     slots in the level
 * @param items     published items in it
 * @param histogram {@code histogram[n]} = buckets holding exactly n items
 */
public record LevelStats(int depth, long offset, long buckets, long slots, long items, long[] histogram) {

    public double loadFactor() {
        return slots == 0 ? 0 : (double) items / slots;
    }
}
