package org.gphash.cuda.runtime;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The layout of one of the kernels' parameter structs, stated once on the Java side (issue 54: the
 * structs were trusted by their field count). Every field is 8 bytes, little-endian, in declaration
 * order, as the CUDA headers declare them; an array field is written {@code name[n]}. The CI test
 * {@code SharedConstantsTest} compares each descriptor with the struct of the same name in the headers,
 * field by field, by name and order, and a {@link Writer} packs by field name, refusing a name the
 * struct does not have and a struct with a field left unset.
 */
public final class ParamStruct {

    private final String cudaName;
    private final List<String> fields;
    private final Map<String, int[]> places = new HashMap<>();
    private final int words;

    private ParamStruct(String cudaName, String... fields) {
        this.cudaName = cudaName;
        List<String> list = new ArrayList<>();
        int at = 0;
        for (String f : fields) {
            int open = f.indexOf('[');
            String name = open < 0 ? f : f.substring(0, open);
            int n = open < 0 ? 1 : Integer.parseInt(f.substring(open + 1, f.length() - 1));
            if (places.put(name, new int[] {at, n}) != null) {
                throw new IllegalArgumentException(cudaName + " names field " + name + " twice");
            }
            list.add(f);
            at += n;
        }
        this.fields = Collections.unmodifiableList(list);
        this.words = at;
    }

    /**
     * A struct's layout.
     *
     * @param cudaName the struct's name in the CUDA headers
     * @param fields   its fields in declaration order, as the headers name them ({@code name[n]} for an array)
     * @return the layout
     */
    public static ParamStruct of(String cudaName, String... fields) {
        return new ParamStruct(cudaName, fields);
    }

    /** {@return the struct's name in the CUDA headers} */
    public String cudaName() {
        return cudaName;
    }

    /** {@return the fields in declaration order, arrays as {@code name[n]}} */
    public List<String> fields() {
        return fields;
    }

    /** {@return the 8-byte words the struct takes} */
    public int words() {
        return words;
    }

    /** {@return the byte offset of field {@code name} in the struct (its first element, for an array)} */
    public int byteOffset(String name) {
        int[] p = places.get(name);
        if (p == null) {
            throw new IllegalArgumentException(cudaName + " has no field " + name);
        }
        return p[0] * 8;
    }

    /** {@return a writer of one struct's bytes} */
    public Writer writer() {
        return new Writer();
    }

    /** Packs one struct by field name; {@link #bytes()} refuses a struct with a field left unset. */
    public final class Writer {
        private final long[] values = new long[words];
        private final boolean[] set = new boolean[words];

        private Writer() {
        }

        /** Sets the field {@code name} (element 0 of an array field). */
        public Writer put(String name, long value) {
            return put(name, 0, value);
        }

        /** Sets a flag field: 1 or 0. */
        public Writer put(String name, boolean value) {
            return put(name, 0, value ? 1 : 0);
        }

        /** Sets element {@code i} of the array field {@code name}. */
        public Writer put(String name, int i, long value) {
            int[] place = places.get(name);
            if (place == null || i < 0 || i >= place[1]) {
                throw new IllegalArgumentException(cudaName + " has no field " + name + (i == 0 ? "" : "[" + i + "]"));
            }
            values[place[0] + i] = value;
            set[place[0] + i] = true;
            return this;
        }

        /** {@return the struct's bytes, little-endian} */
        public byte[] bytes() {
            requireAllSet();
            ByteBuffer b = ByteBuffer.allocate(words * 8).order(ByteOrder.LITTLE_ENDIAN);
            for (long v : values) {
                b.putLong(v);
            }
            return b.array();
        }

        /** {@return the struct's words in order, for a caller that writes them into memory itself} */
        public long[] words() {
            requireAllSet();
            return values;  // the writer is used once: its array is handed over, not copied
        }

        private void requireAllSet() {
            for (int w = 0; w < words; w++) {
                if (!set[w]) {
                    throw new IllegalStateException(cudaName + ": word " + w + " (of " + fields + ") was not set");
                }
            }
        }
    }
}
