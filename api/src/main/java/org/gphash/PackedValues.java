package org.gphash;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.gphash.spi.HostMemory;

/**
 * A column of values of any length, back to back in one off-heap block, each found by its own offset
 * and length (issue 53's jagged column, as TorchRec passes jagged values): what a batch or a result
 * of an index whose values have any length holds its values in, so that a value of 100 bytes moves
 * 100 bytes, not a place of the value size (4 KiB in a pool of values up to 4 KiB), and nothing is
 * zeroed behind it. Operation {@code i}'s entry is written once, at any time and in any order
 * (a batch appends in order; an engine fills results as its operations finish); an operation never
 * written has no entry to read.
 *
 * <p>Offsets are ints: a column holds at most {@link #MAX_BYTES}, and a batch or result that would
 * pass it is refused with the reason (run it and start another).
 */
final class PackedValues {

    /** The most bytes one column holds. */
    static final long MAX_BYTES = Integer.MAX_VALUE - 64;

    private MemorySegment bytes;
    private long end;
    private int[] starts;
    private int[] lengths;

    /** Bytes a column makes room for per value at first (a typical value; it grows by doubling) ... */
    private static final int TYPICAL_VALUE_BYTES = 256;
    /** ... and at most in all: a column made for many values of a large value size grows to what they take. */
    private static final long FIRST_ROOM_MAX = 64L << 20;

    /**
     * {@return a column for {@code operations} entries with room at first for {@code values} values of
     * a typical length (at most the value size {@code valueSize}), up to {@link #FIRST_ROOM_MAX}}
     */
    static PackedValues withRoomFor(int operations, int values, int valueSize) {
        return new PackedValues(operations, Math.min(FIRST_ROOM_MAX, (long) values * Math.min(valueSize, TYPICAL_VALUE_BYTES)));
    }

    /** A column for {@code operations} entries, with {@code initialBytes} of room at first (it grows by doubling). */
    private PackedValues(int operations, long initialBytes) {
        this.starts = new int[Math.max(1, operations)];
        this.lengths = new int[Math.max(1, operations)];
        this.bytes = HostMemory.allocate(Math.max(64, Math.min(MAX_BYTES, initialBytes))).segment();
    }

    /** Makes room for entries {@code 0..n-1}, keeping those written. */
    void ensureOperations(int n) {
        if (n > starts.length) {
            starts = Arrays.copyOf(starts, n);
            lengths = Arrays.copyOf(lengths, n);
        }
    }

    /**
     * Makes room for {@code n} more bytes past the last entry written, moving the column to a larger
     * block if needed, and {@return the offset the next entry starts at}: a writer copies a value of
     * up to {@code n} bytes there, into {@link #block()}, then says its length with {@link #commit}.
     */
    long reserve(long n) {
        long need = end + n;
        if (need > bytes.byteSize()) {
            if (need > MAX_BYTES) {
                throw new IllegalStateException("the values of a batch or result pass " + MAX_BYTES + " bytes: run it and "
                        + "start another");
            }
            MemorySegment larger = HostMemory.allocate(Math.min(MAX_BYTES, Math.max(need, 2 * bytes.byteSize()))).segment();
            MemorySegment.copy(bytes, 0, larger, 0, end);
            bytes = larger;  // the slice keeps its block alive (HostMemory's automatic arena)
        }
        return end;
    }

    /** Entry {@code i} is the {@code length} bytes at the offset {@link #reserve} returned last. */
    void commit(int i, int length) {
        starts[i] = (int) end;
        lengths[i] = length;
        end += length;
    }

    /** Entry {@code i} is a copy of {@code length} bytes of {@code from} at {@code at}. */
    void put(int i, MemorySegment from, long at, int length) {
        long to = reserve(length);
        MemorySegment.copy(from, at, bytes, to, length);
        commit(i, length);
    }

    /** Entry {@code i} is empty (an operation without a value). */
    void putEmpty(int i) {
        starts[i] = (int) end;
        lengths[i] = 0;
    }

    /** {@return where entry {@code i} starts in {@link #block()}} */
    long offset(int i) {
        return starts[i];
    }

    /** {@return the length of entry {@code i}} */
    int length(int i) {
        return lengths[i];
    }

    /** {@return the block the entries lie in, room past them included; it changes only in {@link #reserve}} */
    MemorySegment block() {
        return bytes;
    }

    /** {@return the bytes of every entry written, back to back} */
    MemorySegment used() {
        return bytes.asSlice(0, end);
    }

    /** {@return the bytes the entries take} */
    long usedBytes() {
        return end;
    }

    /** Forgets every entry, keeping the memory. */
    void clear() {
        end = 0;
    }

    /** Keeps entries {@code 0..n-1} of a column written in order and forgets the rest. */
    void truncate(int n) {
        end = n == 0 ? 0 : starts[n - 1] + (long) lengths[n - 1];
    }
}
