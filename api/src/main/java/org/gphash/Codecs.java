package org.gphash;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;

/** The built-in {@link Codec}s. */
final class Codecs {

    private Codecs() {
    }

    private static ByteBuffer le(byte[] b, int offset, int length) {
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

    static final class RecordCodec<R extends Record> implements Codec<R> {
        private final Class<R> type;
        private final RecordComponent[] components;
        private final MethodHandle[] accessors;
        private final MethodHandle constructor;
        private final int size;

        private RecordCodec(MethodHandles.Lookup lookup, Class<R> type) {
            this.type = type;
            this.components = type.getRecordComponents();
            this.accessors = new MethodHandle[components.length];
            Class<?>[] types = new Class<?>[components.length];
            int bytes = 0;
            try {
                for (int i = 0; i < components.length; i++) {
                    Class<?> c = components[i].getType();
                    if (!c.isPrimitive()) {
                        throw new IllegalArgumentException("record " + type.getName() + ": component "
                                + components[i].getName() + " is a " + c.getName() + "; only primitives have a fixed size");
                    }
                    types[i] = c;
                    bytes += c == boolean.class ? 1 : widthOf(c);
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
            if (bytes == 0) {
                throw new IllegalArgumentException("record " + type.getName() + " has no components");
            }
            this.size = bytes;
        }

        static <R extends Record> RecordCodec<R> of(MethodHandles.Lookup lookup, Class<R> type) {
            return new RecordCodec<>(lookup, Objects.requireNonNull(type, "type"));
        }

        private static int widthOf(Class<?> c) {
            if (c == byte.class) {
                return 1;
            }
            if (c == short.class || c == char.class) {
                return 2;
            }
            if (c == int.class || c == float.class) {
                return 4;
            }
            return 8;  // long, double
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
            ByteBuffer b = le(out, offset, size);
            int at = offset;
            try {
                for (int i = 0; i < components.length; i++) {
                    Object v = accessors[i].invoke(value);
                    Class<?> c = components[i].getType();
                    if (c == boolean.class) {
                        b.put(at, (byte) ((Boolean) v ? 1 : 0));
                    } else if (c == byte.class) {
                        b.put(at, (Byte) v);
                    } else if (c == short.class) {
                        b.putShort(at, (Short) v);
                    } else if (c == char.class) {
                        b.putChar(at, (Character) v);
                    } else if (c == int.class) {
                        b.putInt(at, (Integer) v);
                    } else if (c == float.class) {
                        b.putFloat(at, (Float) v);
                    } else if (c == long.class) {
                        b.putLong(at, (Long) v);
                    } else {
                        b.putDouble(at, (Double) v);
                    }
                    at += c == boolean.class ? 1 : widthOf(c);
                }
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("reading record " + type.getName() + ": " + e, e);
            }
        }

        @Override
        public R decode(byte[] in, int offset) {
            ByteBuffer b = le(in, offset, size);
            Object[] args = new Object[components.length];
            int at = offset;
            for (int i = 0; i < components.length; i++) {
                Class<?> c = components[i].getType();
                args[i] = c == boolean.class ? (Object) (b.get(at) != 0) : c == byte.class ? (Object) b.get(at)
                        : c == short.class ? (Object) b.getShort(at) : c == char.class ? (Object) b.getChar(at)
                        : c == int.class ? (Object) b.getInt(at) : c == float.class ? (Object) b.getFloat(at)
                        : c == long.class ? (Object) b.getLong(at) : (Object) b.getDouble(at);
                at += c == boolean.class ? 1 : widthOf(c);
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
