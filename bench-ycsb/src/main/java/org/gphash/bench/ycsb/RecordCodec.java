package org.gphash.bench.ycsb;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
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
 * zero-padded to the value size. A record that does not fit is refused (BAD_REQUEST), never
 * truncated: use a workload with {@code fieldcount=1} and {@code fieldlength=100}, which takes
 * 2 + 1 + 6 + 2 + 100 = 111 of 128 bytes (our workload files do).
 */
public final class RecordCodec {

    private final int keySize;
    private final int valueSize;
    private final KeyCodec ids = new KeyCodec(8);

    public RecordCodec(int keySize, int valueSize) {
        this.keySize = keySize;
        this.valueSize = valueSize;
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

    /** The record as a value of {@code valueSize} bytes; null if it does not fit. */
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
        return out;
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
