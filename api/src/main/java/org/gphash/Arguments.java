package org.gphash;

import java.lang.foreign.MemorySegment;

/** Argument checks with messages that name what is wrong. */
final class Arguments {

    private Arguments() {
    }

    static void checkKey(byte[] key, int keySize) {
        if (key == null) {
            throw new NullPointerException("key is null");
        }
        if (key.length != keySize) {
            throw new IllegalArgumentException("key must be " + keySize + " bytes (the pool's key size), got " + key.length);
        }
    }

    /** A value of exactly {@code valueSize} bytes, or, with {@code upTo}, of 0 to {@code valueSize}. */
    static void checkValue(byte[] value, int valueSize, boolean upTo) {
        if (value == null) {
            throw new NullPointerException("value is null");
        }
        if (upTo && value.length > valueSize) {
            throw new IllegalArgumentException(
                    "value must be at most " + valueSize + " bytes (the pool's value size), got " + value.length);
        }
        if (!upTo && value.length != valueSize) {
            throw new IllegalArgumentException(
                    "value must be " + valueSize + " bytes (the pool's value size), got " + value.length);
        }
    }

    static void checkKey(MemorySegment key, int keySize) {
        if (key == null) {
            throw new NullPointerException("key is null");
        }
        if (key.byteSize() != keySize) {
            throw new IllegalArgumentException("key must be " + keySize + " bytes (the pool's key size), got " + key.byteSize());
        }
    }

    static void checkValue(MemorySegment value, int valueSize, boolean upTo, String what) {
        if (value == null) {
            throw new NullPointerException(what + " is null");
        }
        if (upTo && value.byteSize() > valueSize) {
            throw new IllegalArgumentException(
                    what + " must be at most " + valueSize + " bytes (the pool's value size), got " + value.byteSize());
        }
        if (!upTo && value.byteSize() != valueSize) {
            throw new IllegalArgumentException(
                    what + " must be " + valueSize + " bytes (the pool's value size), got " + value.byteSize());
        }
        if (value.isReadOnly() && what.startsWith("output")) {
            throw new IllegalArgumentException(what + " is read-only");
        }
    }
}
