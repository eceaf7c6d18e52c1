package org.gphash.persistence;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Objects;

import org.gphash.PersistenceMode;
import org.gphash.error.PoolIoException;
import org.gphash.pmem.LibPmem;

/** Chooses and builds the {@link Persister} for a mapping. */
public final class Persisters {

    private Persisters() {
    }

    /**
     * The best persister for {@code mapping}: none on tmpfs (nothing to flush there), libpmem's
     * {@code pmem_persist} when the mapping is
     * persistent memory, libpmem's {@code pmem_msync} when libpmem is present but the mapping is
     * not, and {@link MemorySegment#force()} when libpmem is absent or {@code preferJdk} is set.
     */
    public static Persister choose(MemorySegment mapping, boolean preferJdk, boolean onTmpfs) {
        Objects.requireNonNull(mapping, "mapping");
        if (onTmpfs && !preferJdk) {
            return new MemoryPersister();
        }
        if (preferJdk || !LibPmem.isAvailable()) {
            return new ForcePersister();
        }
        boolean isPmem = mapping.byteSize() > 0 && LibPmem.pmem_is_pmem(mapping, mapping.byteSize()) != 0;
        return isPmem ? new PmemPersistPersister() : new PmemMsyncPersister();
    }

    /** For a pool opened read-only: any persist is a bug in the caller, so it fails loudly. */
    static Persister readOnly(Path path) {
        return new Persister() {
            @Override
            public void persist(MemorySegment mapping, long offset, long length) {
                throw new PoolIoException("pool " + path + " is open read-only; nothing may be persisted");
            }

            @Override
            public PersistenceMode mode() {
                return PersistenceMode.MEMORY;
            }
        };
    }

    /** tmpfs: the file is memory; there is nothing to flush. */
    static final class MemoryPersister implements Persister {
        @Override
        public void persist(MemorySegment mapping, long offset, long length) {
            // Ordering comes from the engine's volatile and CAS stores; durability from the page cache.
        }

        @Override
        public void persistAll(MemorySegment mapping, PersistRanges ranges) {
        }

        @Override
        public int atomicWriteUnit() {
            return 4096;
        }

        @Override
        public PersistenceMode mode() {
            return PersistenceMode.MEMORY;
        }
    }

    /** {@code MemorySegment.force()} on the slice: msync(2) of the pages that hold it. */
    static final class ForcePersister implements Persister {
        @Override
        public void persist(MemorySegment mapping, long offset, long length) {
            mapping.asSlice(offset, length).force();
        }

        @Override
        public PersistenceMode mode() {
            return PersistenceMode.FORCE;
        }
    }

    /** libpmem cache-line flushes; only correct on DAX-mapped persistent memory. */
    static final class PmemPersistPersister implements Persister {
        @Override
        public void persist(MemorySegment mapping, long offset, long length) {
            LibPmem.pmem_persist(mapping.asSlice(offset, length), length);
        }

        @Override
        public int atomicWriteUnit() {
            return 8;
        }

        /** A flush of each range (the lines may drain in any order among themselves), then one drain. */
        @Override
        public void persistAll(MemorySegment mapping, PersistRanges ranges) {
            for (int i = 0; i < ranges.size(); i++) {
                LibPmem.pmem_flush(mapping.asSlice(ranges.offset(i), ranges.length(i)), ranges.length(i));
            }
            if (!ranges.isEmpty()) {
                LibPmem.pmem_drain();
            }
        }

        @Override
        public PersistenceMode mode() {
            return PersistenceMode.PMEM_PERSIST;
        }
    }

    /** libpmem's msync wrapper, which aligns the range to pages itself. */
    static final class PmemMsyncPersister implements Persister {
        @Override
        public void persist(MemorySegment mapping, long offset, long length) {
            if (LibPmem.pmem_msync(mapping.asSlice(offset, length), length) != 0) {
                throw new PoolIoException("pmem_msync failed: " + LibPmem.lastError());
            }
        }

        @Override
        public PersistenceMode mode() {
            return PersistenceMode.PMEM_MSYNC;
        }
    }
}
