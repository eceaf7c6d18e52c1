package org.gphash.bench.ycsb;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.gphash.bench.KeyCodec;

/**
 * Maps YCSB's records and keys onto the engine's fixed sizes.
 *
 * <p><b>Keys.</b> With 8-byte keys, the UTF-8 key string is hashed to 64 bits (FNV-1a, then
 * {@link KeyCodec#mix}, so that "user1" and "user2" differ in every byte) and written as
 * {@link KeyCodec} writes an id; two YCSB keys colliding in
 * 64 bits would share a record, which for YCSB's key space (at most billions of "user..." keys) is
 * a chance of about n^2 / 2^65. With larger keys, the UTF-8 bytes are padded with zeros (YCSB's
 * keys, "user" and up to 20 digits, fit 32 bytes); a longer key is refused.
 *
 * <p><b>Values.</b> A record (field name to bytes) is serialised in field-name order as
 * {@code u16 field count, then per field: u8 name length, name, u16 value length, value bytes},
 * zero-padded to the value size, or at its own length where the pool's values have any length (a
 * format 3 pool on the CPU backend: {@code gphash.poolformat=3}). A record that does not fit is refused (BAD_REQUEST), never
 * truncated. The binding sizes a new pool's values for the workload's largest record
 * ({@link #valueSizeFor}): YCSB's standard records (10 fields of 100 bytes) take 2 + 10 * 109 = 1,092
 * bytes, a value of 1,104; our workload files' one field of 100 bytes takes 111, a value of 128.
 */
public final class RecordCodec {

    private final int keySize;
    private final int valueSize;
    /** Whether values are written at the record's length (the pool takes values of any length). */
    private final boolean ownLength;
    private final KeyCodec ids = new KeyCodec(8);

    public RecordCodec(int keySize, int valueSize) {
        this(keySize, valueSize, false);
    }

    /** With {@code ownLength}, records are encoded at their own length rather than padded to the value size. */
    public RecordCodec(int keySize, int valueSize, boolean ownLength) {
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.ownLength = ownLength;
    }

    /** The smallest value size the binding gives a pool: what the project's benchmarks measure with. */
    static final int MIN_VALUE_SIZE = 128;

    /**
     * Bytes of the largest record a workload writes: {@code fieldCount} fields named
     * {@code namePrefix + i}, each of at most {@code fieldLength} bytes, as {@link #encode} lays them out.
     */
    static int recordBytes(int fieldCount, int fieldLength, String namePrefix) {
        long n = 2;
        for (int i = 0; i < fieldCount; i++) {
            n += 1 + (namePrefix + i).getBytes(StandardCharsets.UTF_8).length + 2 + fieldLength;
        }
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(fieldCount + " fields of " + fieldLength + " bytes make a record of " + n
                    + " bytes, more than a value can hold");
        }
        return (int) n;
    }

    /**
     * The value size for a workload's records, from YCSB's own properties and defaults
     * ({@code fieldcount} 10, {@code fieldlength} 100, {@code fieldnameprefix} "field"): the largest
     * record rounded up to 16 bytes, and at least {@link #MIN_VALUE_SIZE}.
     */
    static int valueSizeFor(Properties p) {
        int bytes = recordBytes(Integer.parseInt(p.getProperty("fieldcount", "10")),
                Integer.parseInt(p.getProperty("fieldlength", "100")), p.getProperty("fieldnameprefix", "field"));
        return Math.max(MIN_VALUE_SIZE, (bytes + 15) & ~15);
    }

    /** The engine key of a YCSB key; null if it does not fit. */
    public byte[] key(String ycsbKey) {
        byte[] utf8 = ycsbKey.getBytes(StandardCharsets.UTF_8);
        byte[] key = new byte[keySize];
        if (keySize == 8) {
            long h = 0xcbf29ce484222325L;
            for (byte b : utf8) {
                h = (h ^ (b & 0xFF)) * 0x100000001b3L;
            }
            // The benchmarks' key codec: the id (here the string's hash, finalised) little-endian.
            ids.encode(KeyCodec.mix(h), key, 0);
            return key;
        }
        if (utf8.length > keySize) {
            return null;
        }
        System.arraycopy(utf8, 0, key, 0, utf8.length);
        return key;
    }

    /** The record as a value of {@code valueSize} bytes (or of its own length); null if it does not fit. */
    public byte[] encode(Map<String, byte[]> record) {
        byte[] out = new byte[valueSize];
        if (valueSize < 2) {
            return null;
        }
        TreeMap<String, byte[]> sorted = new TreeMap<>(record);
        if (sorted.size() > 0xFFFF) {
            return null;
        }
        int p = 0;
        out[p++] = (byte) sorted.size();
        out[p++] = (byte) (sorted.size() >>> 8);
        for (Map.Entry<String, byte[]> e : sorted.entrySet()) {
            byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
            byte[] v = e.getValue();
            if (name.length > 0xFF || v.length > 0xFFFF || p + 1 + name.length + 2 + v.length > valueSize) {
                return null;
            }
            out[p++] = (byte) name.length;
            System.arraycopy(name, 0, out, p, name.length);
            p += name.length;
            out[p++] = (byte) v.length;
            out[p++] = (byte) (v.length >>> 8);
            System.arraycopy(v, 0, out, p, v.length);
            p += v.length;
        }
        return ownLength ? Arrays.copyOf(out, p) : out;
    }

    /** The record a value holds (fields in name order). */
    public Map<String, byte[]> decode(byte[] value) {
        TreeMap<String, byte[]> record = new TreeMap<>();
        int p = 0;
        int count = (value[p++] & 0xFF) | (value[p++] & 0xFF) << 8;
        for (int f = 0; f < count; f++) {
            int nameLength = value[p++] & 0xFF;
            String name = new String(value, p, nameLength, StandardCharsets.UTF_8);
            p += nameLength;
            int length = (value[p++] & 0xFF) | (value[p++] & 0xFF) << 8;
            record.put(name, Arrays.copyOfRange(value, p, p + length));
            p += length;
        }
        return record;
    }
}
