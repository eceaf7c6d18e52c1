package org.gphash;

import java.lang.invoke.MethodHandles;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Turns values of one Java type into a fixed number of bytes and back, for {@link GPHashMap}: a
 * pool's keys and values have fixed sizes. Numbers are little-endian, so {@link #longs()} keys are
 * the keys {@link GPHashIndex#put(long, byte[])} writes. The values of a pool whose values have any
 * length ({@link GPHashIndex#valueLengths()}: format 3) may also take a codec of {@link #VARIABLE}
 * size, whose encoding is exactly as long as the value needs ({@link #utf8()}, {@link #byteArrays()}).
 *
 * @param <T> the type
 */
public interface Codec<T> {

    /** {@return the type encoded (a map's {@code get(Object)} of anything else finds nothing)} */
    Class<T> type();

    /** {@link #size()} of a codec whose values encode to as many bytes as each needs. */
    int VARIABLE = -1;

    /** {@return bytes per encoded value: the pool's key or value size; or {@link #VARIABLE}} */
    int size();

    /**
     * Writes {@code value} into {@code out} at {@code offset}, {@link #size()} bytes.
     *
     * @param value  the value, not null
     * @param out    where it goes
     * @param offset where in {@code out}
     * @throws IllegalArgumentException if the value does not fit (a byte array of another length)
     */
    void encode(T value, byte[] out, int offset);

    /**
     * Reads a value written by {@link #encode}.
     *
     * @param in     the bytes
     * @param offset where in {@code in}
     * @return the value
     */
    T decode(byte[] in, int offset);

    /**
     * {@return {@code value} encoded into a new array} (a {@link #VARIABLE} codec overrides it: its
     * array is as long as the value needs, and {@link #decode} reads from {@code offset} to its end)
     *
     * @param value the value, not null
     */
    default byte[] encode(T value) {
        byte[] out = new byte[size()];
        encode(Objects.requireNonNull(value, "null is not stored"), out, 0);
        return out;
    }

    /** {@return 8-byte little-endian longs} */
    static Codec<Long> longs() {
        return Codecs.LONG;
    }

    /** {@return 4-byte little-endian ints} */
    static Codec<Integer> ints() {
        return Codecs.INT;
    }

    /** {@return 16-byte UUIDs (most significant half first, each half little-endian)} */
    static Codec<UUID> uuids() {
        return Codecs.UUIDS;
    }

    /**
     * Byte arrays of exactly {@code length} bytes (stored as they are; a map compares them by content).
     *
     * @param length the arrays' length
     * @return the codec
     */
    static Codec<byte[]> bytes(int length) {
        if (length < 1) {
            throw new IllegalArgumentException("byte array length must be at least 1, got " + length);
        }
        return new Codec<>() {
            @Override
            public Class<byte[]> type() {
                return byte[].class;
            }

            @Override
            public int size() {
                return length;
            }

            @Override
            public void encode(byte[] value, byte[] out, int offset) {
                if (value.length != length) {
                    throw new IllegalArgumentException("a byte array of " + length + " bytes is expected, got " + value.length);
                }
                System.arraycopy(value, 0, out, offset, length);
            }

            @Override
            public byte[] decode(byte[] in, int offset) {
                return Arrays.copyOfRange(in, offset, offset + length);
            }
        };
    }

    /**
     * Strings of any length as their UTF-8 bytes, nothing around them: a codec of {@link #VARIABLE}
     * size, for the values of a pool whose values have any length (format 3); a string longer than the
     * pool's value size is refused by the pool.
     *
     * @return the codec
     */
    static Codec<String> utf8() {
        return VariableCodecs.UTF8;
    }

    /**
     * Byte arrays of any length, as they are: a codec of {@link #VARIABLE} size (see {@link #utf8()}).
     *
     * @return the codec
     */
    static Codec<byte[]> byteArrays() {
        return VariableCodecs.BYTE_ARRAYS;
    }

    /**
     * Strings of at most {@code maxBytes} bytes of UTF-8: a 2-byte little-endian length, the bytes,
     * zeros to the end, so {@link #size()} is {@code maxBytes + 2} (a pool's key size for string keys:
     * equal strings encode to equal bytes). A longer string is refused, never cut.
     *
     * @param maxBytes the longest string, in UTF-8 bytes (1 to 65,535)
     * @return the codec
     */
    static Codec<String> strings(int maxBytes) {
        return new Codecs.BoundedStrings(maxBytes);
    }

    /**
     * Byte arrays of any length up to {@code maxLength}: a 4-byte little-endian length, the bytes,
     * zeros to the end, so {@link #size()} is {@code maxLength + 4}. A longer array is refused.
     *
     * @param maxLength the longest array (0 to {@code Integer.MAX_VALUE - 4})
     * @return the codec
     */
    static Codec<byte[]> bytesUpTo(int maxLength) {
        return new Codecs.BoundedBytes(maxLength);
    }

    /**
     * Lists of at most {@code maxElements} elements, each of {@code element}'s fixed size: a 2-byte
     * little-endian count, the elements, zeros to the end, so {@link #size()} is
     * {@code 2 + maxElements * element.size()}. A longer list, or a null element, is refused; a decoded
     * list is unmodifiable.
     *
     * @param element     the elements' codec
     * @param maxElements the most elements (0 to 65,535)
     * @param <E>         the element type
     * @return the codec
     */
    static <E> Codec<List<E>> listOf(Codec<E> element, int maxElements) {
        return new Codecs.BoundedLists<>(element, maxElements);
    }

    /**
     * Lists of any number of elements, for the values of a pool whose values have any length (format
     * 3): a codec of {@link #VARIABLE} size. A 4-byte little-endian count, then each element: its bytes
     * where {@code element} has a fixed size, a 4-byte little-endian length and its bytes where it has
     * any length ({@link #utf8()}, another list, a record with such a component); nothing after the
     * last. A null element is refused; a decoded list is unmodifiable.
     *
     * @param element the elements' codec, of fixed size or of any length
     * @param <E>     the element type
     * @return the codec
     */
    static <E> Codec<List<E>> listOf(Codec<E> element) {
        return new VariableCodecs.VariableLists<>(element);
    }

    /**
     * Records whose components are all primitives, encoded in declaration order, little-endian
     * (a {@code boolean} as one byte), through the canonical constructor.
     *
     * @param type the record class
     * @param <R>  the record type
     * @return the codec
     * @throws IllegalArgumentException if a component is not a primitive, or the record is not public
     *                                  (use {@link #record(MethodHandles.Lookup, Class)} then)
     */
    static <R extends Record> Codec<R> record(Class<R> type) {
        return Codecs.RecordCodec.of(MethodHandles.publicLookup(), type);
    }

    /**
     * As {@link #record(Class)}, for a record of any accessibility the caller can reach: pass
     * {@code MethodHandles.lookup()} from the application's own code, e.g.
     * {@code Codec.record(MethodHandles.lookup(), Point.class)} for a record nested privately in it.
     *
     * @param lookup a lookup with access to the record's accessors and canonical constructor
     * @param type   the record class
     * @param <R>    the record type
     * @return the codec
     * @throws IllegalArgumentException if a component is not a primitive, or {@code lookup} cannot reach the record
     */
    static <R extends Record> Codec<R> record(MethodHandles.Lookup lookup, Class<R> type) {
        return Codecs.RecordCodec.of(Objects.requireNonNull(lookup, "lookup"), type);
    }

    /**
     * Records of any components: each in declaration order, a primitive little-endian, any other
     * component (or a primitive to encode otherwise) by the codec given for it by name, e.g.
     * {@code Codec.record(MethodHandles.lookup(), User.class, Map.of("name", Codec.strings(40), "tags",
     * Codec.listOf(Codec.strings(16), 8)))}. {@link #size()} is the sum of the parts'. Where a part has
     * any length ({@link #utf8()}, {@link #listOf(Codec)}: for a pool whose values have any length), the
     * record's codec has {@link #VARIABLE} size: each part after the last, those of any length as a
     * 4-byte little-endian length and their bytes, so a record takes what its values need.
     *
     * @param lookup a lookup with access to the record's accessors and canonical constructor
     * @param type   the record class
     * @param parts  codecs by component name, for every component that is not a primitive
     * @param <R>    the record type
     * @return the codec
     * @throws IllegalArgumentException if a non-primitive component has no codec, a codec names no component
     *                                  or encodes another type, or {@code lookup} cannot reach the record
     */
    static <R extends Record> Codec<R> record(MethodHandles.Lookup lookup, Class<R> type, Map<String, Codec<?>> parts) {
        return Codecs.RecordCodec.of(Objects.requireNonNull(lookup, "lookup"), type, Objects.requireNonNull(parts, "parts"));
    }
}
