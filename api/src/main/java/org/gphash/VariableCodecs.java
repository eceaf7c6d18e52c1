package org.gphash;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The built-in {@link Codec}s of values of any length ({@link Codec#VARIABLE} size, for pools whose
 * values have any length: format 3), and how a list or record of any length lays out its parts: each
 * of fixed size as its bytes, each of any length behind a 4-byte little-endian length. The codecs of
 * fixed size are {@link Codecs}'.
 */
final class VariableCodecs {

    /** UTF-8 strings of any length, nothing around them ({@link Codec#utf8()}). */
    static final Codec<String> UTF8 = new Variable<>(String.class) {
        @Override
        public byte[] encode(String value) {
            return Objects.requireNonNull(value, "null is not stored").getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] in, int offset) {
            return new String(in, offset, in.length - offset, StandardCharsets.UTF_8);
        }
    };

    /** Byte arrays of any length, as they are ({@link Codec#byteArrays()}). */
    static final Codec<byte[]> BYTE_ARRAYS = new Variable<>(byte[].class) {
        @Override
        public byte[] encode(byte[] value) {
            return Objects.requireNonNull(value, "null is not stored").clone();
        }

        @Override
        public byte[] decode(byte[] in, int offset) {
            return Arrays.copyOfRange(in, offset, in.length);
        }
    };

    /**
     * A codec of {@link Codec#VARIABLE} size: each value's array is its own ({@link #encode(Object)});
     * it has no fixed place in another codec's bytes, so it encodes nothing into one.
     */
    private abstract static class Variable<T> implements Codec<T> {
        private final Class<T> type;

        Variable(Class<T> type) {
            this.type = type;
        }

        @Override
        public Class<T> type() {
            return type;
        }

        @Override
        public int size() {
            return VARIABLE;
        }

        @Override
        public abstract byte[] encode(T value);

        @Override
        public void encode(T value, byte[] out, int offset) {
            throw new UnsupportedOperationException("a codec of values of any length encodes each into an array of "
                    + "its own (encode(value)); it cannot be a part of a codec of fixed size");
        }
    }

    /** Bytes of the little-endian length before each part of any length inside a list or record of any length. */
    private static final int PART_LENGTH = 4;

    /**
     * Writes a part of a codec of any length at {@code at} of {@code out}: a part of fixed size as its
     * bytes, one of any length as a 4-byte little-endian length and its bytes ({@code encoded}, made by
     * the first pass). Returns where the next part starts.
     */
    static int putPart(Codec<Object> part, Object value, byte[] encoded, byte[] out, int at) {
        if (encoded == null) {
            part.encode(value, out, at);
            return at + part.size();
        }
        Codecs.le(out, at, PART_LENGTH).putInt(at, encoded.length);
        System.arraycopy(encoded, 0, out, at + PART_LENGTH, encoded.length);
        return at + PART_LENGTH + encoded.length;
    }

    /** The bytes a part takes inside a codec of any length ({@link #putPart}). */
    static int partBytes(Codec<?> part, byte[] encoded) {
        return encoded == null ? part.size() : PART_LENGTH + encoded.length;
    }

    /**
     * Reads the part at {@code at[0]} of {@code in}, moving {@code at[0]} past it; a part of any length is
     * decoded from a copy of its own bytes (such a codec reads to the end of its array). {@code what}
     * names the codec in the refusal of a value cut short.
     */
    static Object takePart(Codec<Object> part, byte[] in, int[] at, String what) {
        int from = at[0];
        int end = in.length;
        if (part.size() != Codec.VARIABLE) {
            if (from + part.size() > end) {
                throw notWrittenBy(what);
            }
            at[0] = from + part.size();
            return part.decode(in, from);
        }
        if (from + PART_LENGTH > end) {
            throw notWrittenBy(what);
        }
        int n = Codecs.le(in, from, PART_LENGTH).getInt(from);
        if (n < 0 || n > end - from - PART_LENGTH) {
            throw notWrittenBy(what);
        }
        at[0] = from + PART_LENGTH + n;
        return part.decode(Arrays.copyOfRange(in, from + PART_LENGTH, from + PART_LENGTH + n), 0);
    }

    private static IllegalArgumentException notWrittenBy(String what) {
        return new IllegalArgumentException("a stored value shorter than its parts' lengths say: it was not written "
                + "by this codec of " + what);
    }

    /**
     * Lists of any number of elements for a pool whose values have any length ({@link Codec#listOf(Codec)}):
     * a 4-byte little-endian count, then each element: its bytes for an element codec of fixed size, a
     * 4-byte little-endian length and its bytes for one of any length. Nothing past the last element.
     */
    static final class VariableLists<E> extends Variable<List<E>> {
        private final Codec<Object> element;

        @SuppressWarnings("unchecked")
        VariableLists(Codec<E> element) {
            super((Class<List<E>>) (Class<?>) List.class);
            this.element = (Codec<Object>) Objects.requireNonNull(element, "element codec");
        }

        @Override
        public byte[] encode(List<E> value) {
            int n = Objects.requireNonNull(value, "null is not stored").size();
            byte[][] encoded = new byte[n][];
            long bytes = PART_LENGTH;
            int i = 0;
            for (E e : value) {
                Objects.requireNonNull(e, "a list's null element is not stored");
                encoded[i] = element.size() == VARIABLE ? element.encode(e) : null;
                bytes += partBytes(element, encoded[i]);
                i++;
            }
            if (bytes > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("a list of " + bytes + " bytes: too large a value");
            }
            byte[] out = new byte[(int) bytes];
            Codecs.le(out, 0, PART_LENGTH).putInt(0, n);
            int at = PART_LENGTH;
            i = 0;
            for (E e : value) {
                at = putPart(element, e, encoded[i++], out, at);
            }
            return out;
        }

        @Override
        public List<E> decode(byte[] in, int offset) {
            if (in.length - offset < PART_LENGTH) {
                throw notWrittenBy("lists");
            }
            int n = Codecs.le(in, offset, PART_LENGTH).getInt(offset);
            if (n < 0 || n > in.length - offset) {
                throw notWrittenBy("lists");
            }
            List<Object> out = new ArrayList<>(n);
            int[] at = {offset + PART_LENGTH};
            for (int i = 0; i < n; i++) {
                out.add(takePart(element, in, at, "lists"));
            }
            @SuppressWarnings("unchecked")
            List<E> list = (List<E>) Collections.unmodifiableList(out);
            return list;
        }
    }

    private VariableCodecs() {
    }
}
