package org.gphash.table;

import org.gphash.Geometry;
import org.gphash.PoolFullException;
import org.gphash.error.PoolIoException;
import org.gphash.error.PoolSpaceException;
import org.gphash.format.ExtentTag;
import org.gphash.format.PoolHeader;
import org.gphash.persistence.PoolFile;

/** Placement of new extents (levels, heap chunks) at the end of the committed pool. */
final class PoolSpace {

    /** Levels and chunks start on a page boundary ({@link ExtentTag#ALIGNMENT}). */
    static final long EXTENT_ALIGNMENT = ExtentTag.ALIGNMENT;

    private PoolSpace() {
    }

    /** Where the next extent starts: page-aligned, with room for its {@link ExtentTag} in front. */
    static long nextExtent(PoolHeader header) {
        return extentAfter(header.fileLength());
    }

    /** The first page-aligned offset at or after {@code end} with an {@link ExtentTag}'s room before it. */
    static long extentAfter(long end) {
        return Geometry.alignUp(end + ExtentTag.BYTES, EXTENT_ALIGNMENT);
    }

    /**
     * Makes the file at least {@code length} bytes, refusing to pass {@code maxPoolBytes}. A file
     * shorter than the {@code committed} length was cut while the pool was open: growing it would
     * fill the lost part with zeros that later read as items' values, so that is refused loudly.
     */
    static void ensureLength(PoolFile file, long length, long committed, long maxPoolBytes, String purpose) {
        long size = file.fileSize();
        if (size < committed) {
            throw truncated(file, size, committed);
        }
        if (length > maxPoolBytes) {
            throw new PoolFullException("pool " + file.path() + " would grow to " + length + " bytes for " + purpose
                    + ", beyond its maximum of " + maxPoolBytes + " bytes; nothing was changed");
        }
        if (file.fileSize() < length || file.mappedSize() < length) {
            try {
                file.grow(length);
            } catch (PoolSpaceException e) {
                throw new PoolFullException("pool " + file.path() + " cannot grow to " + length + " bytes for " + purpose
                        + ": the file system has no room (" + e.getMessage() + "); nothing was changed");
            }
        }
    }

    /** The error for a pool file found shorter than its committed length while open. */
    static PoolIoException truncated(PoolFile file, long size, long committed) {
        return new PoolIoException("pool " + file.path() + " was truncated while open: the file has " + size
                + " bytes, the pool " + committed + "; the data past the cut is lost and the pool must not be used "
                + "further (nothing more was written to it; `gphash check` on a copy shows what is left)");
    }
}
