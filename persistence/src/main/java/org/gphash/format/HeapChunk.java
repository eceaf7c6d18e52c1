package org.gphash.format;

/** A run of value blocks in the pool file: {@code length} bytes from {@code offset}. */
public record HeapChunk(long offset, long length) {
    public HeapChunk {
        if (offset <= 0 || length <= 0) {
            throw new IllegalArgumentException("heap chunk must have a positive offset and length: " + offset + "+" + length);
        }
    }

    public long end() {
        return offset + length;
    }
}
