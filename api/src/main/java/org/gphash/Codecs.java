package org.gphash;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/** The built-in {@link Codec}s. */
final class Codecs {

    /** Refuses a codec of {@link Codec#VARIABLE} size as a part of one of fixed size ({@code what} names the part). */
    static void requireFixed(Codec<?> part, String what) {
        if (part.size() == Codec.VARIABLE) {
            throw new IllegalArgumentException(what + ": a codec of values of any length (Codec.utf8(), "
                    + "Codec.byteArrays()) cannot be a part of a codec of fixed size; use Codec.strings(max) or "
                    + "Codec.bytesUpTo(max), or Codec.listOf(element) for a list of any length");
        }
    }

    private Codecs() {
    }

    static ByteBuffer le(byte[] b, int offset, int length) {
        return ByteBuffer.wrap(b, offset, length).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Writes a value into a little-endian buffer at an offset. */
    private interface Writer<T> {
        void write(ByteBuffer b, int at, T value);
    }

    /** Reads a value from a little-endian buffer at an offset. */
    private interface Reader<T> {
        T read(ByteBuffer b, int at);
    }

    /** A codec of {@code size} bytes through a little-endian buffer. */
    private static <T> Codec<T> fixed(Class<T> type, int size, Writer<T> writer, Reader<T> reader) {
        return new Codec<>() {
            @Override
            public Class<T> type() {
                return type;
            }

            @Override
            public int size() {
                return size;
            }

            @Override
            public void encode(T value, byte[] out, int offset) {
                writer.write(le(out, offset, size), offset, value);
            }

            @Override
            public T decode(byte[] in, int offset) {
                return reader.read(le(in, offset, size), offset);
            }
        };
    }

    static final Codec<Long> LONG = fixed(Long.class, 8, (b, at, v) -> b.putLong(at, v), ByteBuffer::getLong);

    static final Codec<Integer> INT = fixed(Integer.class, 4, (b, at, v) -> b.putInt(at, v), ByteBuffer::getInt);

    static final Codec<UUID> UUIDS = fixed(UUID.class, 16,
            (b, at, v) -> b.putLong(at, v.getMostSignificantBits()).putLong(at + 8, v.getLeastSignificantBits()),
            (b, at) -> new UUID(b.getLong(at), b.getLong(at + 8)));

    /**
     * Records of primitives, component by component ({@link Codec#record(Class)}).
     *
     * @param <R> the record type
     */
    /** {@link Codec#strings}: a u16 length, the UTF-8 bytes, zeros. */
    static final class BoundedStrings implements Codec<String> {
        private final int maxBytes;

        BoundedStrings(int maxBytes) {
            if (maxBytes < 1 || maxBytes > 0xFFFF) {
                throw new IllegalArgumentException("strings of at most 1 to 65,535 UTF-8 bytes, got " + maxBytes);
            }
            this.maxBytes = maxBytes;
        }

        @Override
        public Class<String> type() {
            return String.class;
        }

        @Override
        public int size() {
            return maxBytes + 2;
        }

        @Override
        public void encode(String value, byte[] out, int offset) {
            byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            if (utf8.length > maxBytes) {
                throw new IllegalArgumentException("a string of " + utf8.length + " UTF-8 bytes does not fit a codec of at most "
                        + maxBytes + " (Codec.strings(" + maxBytes + ")): it is refused, not cut");
            }
            out[offset] = (byte) utf8.length;
            out[offset + 1] = (byte) (utf8.length >>> 8);
            System.arraycopy(utf8, 0, out, offset + 2, utf8.length);
            Arrays.fill(out, offset + 2 + utf8.length, offset + size(), (byte) 0);
        }

        @Override
        public String decode(byte[] in, int offset) {
            int length = (in[offset] & 0xFF) | (in[offset + 1] & 0xFF) << 8;
            if (length > maxBytes) {
                throw new IllegalArgumentException("the bytes hold a string of " + length + " bytes, more than this codec's "
                        + maxBytes + ": they were not written by Codec.strings(" + maxBytes + ")");
            }
            return new String(in, offset + 2, length, StandardCharsets.UTF_8);
        }
    }

    /** {@link Codec#bytesUpTo}: a u32 length, the bytes, zeros. */
    static final class BoundedBytes implements Codec<byte[]> {
        private final int maxLength;

        BoundedBytes(int maxLength) {
            if (maxLength < 0 || maxLength > Integer.MAX_VALUE - 4) {
                throw new IllegalArgumentException("byte arrays of at most 0 to " + (Integer.MAX_VALUE - 4) + " bytes, got "
                        + maxLength);
            }
            this.maxLength = maxLength;
        }

        @Override
        public Class<byte[]> type() {
            return byte[].class;
        }

        @Override
        public int size() {
            return maxLength + 4;
        }

        @Override
        public void encode(byte[] value, byte[] out, int offset) {
            if (value.length > maxLength) {
                throw new IllegalArgumentException("a byte array of " + value.length + " bytes does not fit a codec of at most "
                        + maxLength + " (Codec.bytesUpTo(" + maxLength + ")): it is refused, not cut");
            }
            le(out, offset, 4).putInt(offset, value.length);
            System.arraycopy(value, 0, out, offset + 4, value.length);
            Arrays.fill(out, offset + 4 + value.length, offset + size(), (byte) 0);
        }

        @Override
        public byte[] decode(byte[] in, int offset) {
            int length = le(in, offset, 4).getInt(offset);
            if (length < 0 || length > maxLength) {
                throw new IllegalArgumentException("the bytes hold an array of " + length + " bytes, not 0 to this codec's "
                        + maxLength + ": they were not written by Codec.bytesUpTo(" + maxLength + ")");
            }
            return Arrays.copyOfRange(in, offset + 4, offset + 4 + length);
        }
    }

    /** A primitive type's little-endian codec, for a record's primitive components (a {@code boolean} as one byte). */
    static Codec<?> primitive(Class<?> c) {
        if (c == boolean.class) {
            return fixed(Boolean.class, 1, (b, at, v) -> b.put(at, (byte) (v ? 1 : 0)), (b, at) -> b.get(at) != 0);
        } else if (c == byte.class) {
            return fixed(Byte.class, 1, (b, at, v) -> b.put(at, v), (b, at) -> b.get(at));
        } else if (c == short.class) {
            return fixed(Short.class, 2, (b, at, v) -> b.putShort(at, v), (b, at) -> b.getShort(at));
        } else if (c == char.class) {
            return fixed(Character.class, 2, (b, at, v) -> b.putChar(at, v), (b, at) -> b.getChar(at));
        } else if (c == int.class) {
            return INT;
        } else if (c == float.class) {
            return fixed(Float.class, 4, (b, at, v) -> b.putFloat(at, v), (b, at) -> b.getFloat(at));
        } else if (c == long.class) {
            return LONG;
        }
        return fixed(Double.class, 8, (b, at, v) -> b.putDouble(at, v), (b, at) -> b.getDouble(at));
    }

    /**
     * Lists of at most {@code maxElements} elements of one codec: a 2-byte little-endian count, the
     * elements, zeros to the end.
     */
    static final class BoundedLists<E> implements Codec<List<E>> {
        private final Codec<E> element;
        private final int maxElements;
        private final int size;

        BoundedLists(Codec<E> element, int maxElements) {
            this.element = Objects.requireNonNull(element, "element codec");
            requireFixed(element, "the elements of a list");
            if (maxElements < 0 || maxElements > 65_535) {
                throw new IllegalArgumentException("a list of at most " + maxElements + " elements: 0 to 65,535");
            }
            long bytes = 2L + (long) maxElements * element.size();
            if (bytes > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("lists of " + maxElements + " elements of " + element.size()
                        + " bytes do not fit a value");
            }
            this.maxElements = maxElements;
            this.size = (int) bytes;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Class<List<E>> type() {
            return (Class<List<E>>) (Class<?>) List.class;
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public void encode(List<E> value, byte[] out, int offset) {
            if (value.size() > maxElements) {
                throw new IllegalArgumentException("a list of " + value.size() + " elements; this codec holds at most "
                        + maxElements);
            }
            Arrays.fill(out, offset, offset + size, (byte) 0);
            le(out, offset, 2).putShort(offset, (short) value.size());
            int at = offset + 2;
            for (E e : value) {
                element.encode(Objects.requireNonNull(e, "a list's null element is not stored"), out, at);
                at += element.size();
            }
        }

        @Override
        public List<E> decode(byte[] in, int offset) {
            int n = Short.toUnsignedInt(le(in, offset, 2).getShort(offset));
            if (n > maxElements) {
                throw new IllegalArgumentException("a stored list of " + n + " elements, more than this codec's "
                        + maxElements + ": the value was not written by it");
            }
            List<E> out = new ArrayList<>(n);
            for (int i = 0, at = offset + 2; i < n; i++, at += element.size()) {
                out.add(element.decode(in, at));
            }
            return Collections.unmodifiableList(out);
        }
    }

    static final class RecordCodec<R extends Record> implements Codec<R> {
        private final Class<R> type;
        private final RecordComponent[] components;
        private final MethodHandle[] accessors;
        private final MethodHandle constructor;
        /** Each component's codec (a primitive's own, or the one given for it by name), and where its bytes start. */
        private final Codec<Object>[] parts;
        private final int[] partOffsets;
        /** {@link Codec#VARIABLE} where a part is: the record then encodes each part after the last ({@link VariableCodecs#putPart}). */
        private final int size;
        /** "record" and the type's name, for a refusal (made once, not at every decode). */
        private final String description;

        @SuppressWarnings("unchecked")
        private RecordCodec(MethodHandles.Lookup lookup, Class<R> type, Map<String, Codec<?>> given) {
            this.type = type;
            this.description = "record " + type.getName();
            this.components = type.getRecordComponents();
            this.accessors = new MethodHandle[components.length];
            this.parts = new Codec[components.length];
            this.partOffsets = new int[components.length];
            Class<?>[] types = new Class<?>[components.length];
            long bytes = 0;
            boolean variable = false;
            Set<String> unused = new TreeSet<>(given.keySet());
            try {
                for (int i = 0; i < components.length; i++) {
                    Class<?> c = components[i].getType();
                    String name = components[i].getName();
                    Codec<?> part = given.get(name);
                    unused.remove(name);
                    if (part == null && !c.isPrimitive()) {
                        throw new IllegalArgumentException("record " + type.getName() + ": component " + name + " is a "
                                + c.getName() + "; give it a codec by name (Codec.record(lookup, type, "
                                + "Map.of(\"" + name + "\", Codec.strings(64))), for example)");
                    }
                    if (part != null && !c.isAssignableFrom(boxed(part.type())) && !(c.isPrimitive() && boxed(c) == boxed(part.type()))) {
                        throw new IllegalArgumentException("record " + type.getName() + ": component " + name + " is a "
                                + c.getName() + ", and the codec given for it encodes " + part.type().getName());
                    }
                    parts[i] = (Codec<Object>) (part != null ? part : primitive(c));
                    partOffsets[i] = (int) bytes;
                    if (parts[i].size() == VARIABLE) {
                        variable = true;
                    } else {
                        bytes += parts[i].size();
                    }
                    types[i] = c;
                    accessors[i] = lookup.unreflect(components[i].getAccessor());
                }
                this.constructor = lookup.findConstructor(type, MethodType.methodType(void.class, types));
            } catch (IllegalAccessException | NoSuchMethodException e) {
                // One line naming the record and the way out (the JDK's own message names lookup internals).
                // A public record in a package its module does not export needs the lookup, not "public" (issue 55).
                boolean isPublic = Modifier.isPublic(type.getModifiers());
                throw new IllegalArgumentException("record " + type.getName() + " cannot be reached from "
                        + (lookup.lookupClass() == Object.class ? "the public lookup" : lookup.lookupClass().getName())
                        + (isPublic ? " (its module " + type.getModule().getName() + " does not export "
                        + type.getPackageName() + " to gphash)" : "")
                        + ": " + (isPublic ? "" : "make it public, or ") + "pass a lookup that can reach it: "
                        + "Codec.record(MethodHandles.lookup(), " + type.getSimpleName() + ".class)", e);
            }
            if (!unused.isEmpty()) {
                throw new IllegalArgumentException("record " + type.getName() + " has no component named " + unused
                        + "; its components: " + Arrays.stream(components).map(RecordComponent::getName).toList());
            }
            if (bytes == 0 && !variable) {
                throw new IllegalArgumentException("record " + type.getName() + " has no components");
            }
            if (bytes > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("record " + type.getName() + " encodes to " + bytes + " bytes: too large a value");
            }
            this.size = variable ? VARIABLE : (int) bytes;
        }

        static <R extends Record> RecordCodec<R> of(MethodHandles.Lookup lookup, Class<R> type) {
            return new RecordCodec<>(lookup, Objects.requireNonNull(type, "type"), Map.of());
        }

        static <R extends Record> RecordCodec<R> of(MethodHandles.Lookup lookup, Class<R> type, Map<String, Codec<?>> parts) {
            return new RecordCodec<>(lookup, Objects.requireNonNull(type, "type"), Map.copyOf(parts));
        }

        private static Class<?> boxed(Class<?> c) {
            return !c.isPrimitive() ? c : MethodType.methodType(c).wrap().returnType();
        }

        @Override
        public Class<R> type() {
            return type;
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public void encode(R value, byte[] out, int offset) {
            if (size == VARIABLE) {
                throw new UnsupportedOperationException("record " + type.getName() + " has a component of any length, so "
                        + "its codec encodes each record into an array of its own (encode(value)); it cannot be a part "
                        + "of a codec of fixed size");
            }
            for (int i = 0; i < components.length; i++) {
                parts[i].encode(nonNull(value, i), out, offset + partOffsets[i]);
            }
        }

        /**
         * A record with a component of any length: its parts in declaration order, each of fixed size as
         * its bytes, each of any length as a 4-byte little-endian length and its bytes.
         */
        @Override
        public byte[] encode(R value) {
            if (size != VARIABLE) {
                byte[] out = new byte[size];
                encode(Objects.requireNonNull(value, "null is not stored"), out, 0);
                return out;
            }
            Object[] values = new Object[components.length];
            byte[][] encoded = new byte[components.length][];
            long bytes = 0;
            for (int i = 0; i < components.length; i++) {
                values[i] = nonNull(Objects.requireNonNull(value, "null is not stored"), i);
                encoded[i] = parts[i].size() == VARIABLE ? parts[i].encode(values[i]) : null;
                bytes += VariableCodecs.partBytes(parts[i], encoded[i]);
            }
            if (bytes > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("record " + type.getName() + " encodes to " + bytes + " bytes: too large a value");
            }
            byte[] out = new byte[(int) bytes];
            for (int i = 0, at = 0; i < components.length; i++) {
                at = VariableCodecs.putPart(parts[i], values[i], encoded[i], out, at);
            }
            return out;
        }

        private Object nonNull(R value, int i) {
            Object v = component(value, i);
            if (v == null) {
                throw new NullPointerException("record " + type.getName() + ": component " + components[i].getName()
                        + " is null, and null is not stored");
            }
            return v;
        }

        private Object component(R value, int i) {
            try {
                return accessors[i].invoke(value);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("reading record " + type.getName() + ": " + e, e);
            }
        }

        @Override
        public R decode(byte[] in, int offset) {
            Object[] args = new Object[components.length];
            int[] at = {offset};
            for (int i = 0; i < components.length; i++) {
                args[i] = size == VARIABLE ? VariableCodecs.takePart(parts[i], in, at, description)
                        : parts[i].decode(in, offset + partOffsets[i]);
            }
            try {
                return type.cast(constructor.invokeWithArguments(args));
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("making record " + type.getName() + ": " + e, e);
            }
        }
    }
}
