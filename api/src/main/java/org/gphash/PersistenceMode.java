package org.gphash;

/** How the pool's persister makes a range of the mapped pool durable (what {@link IndexStats#persistenceMode()} reports). */
public enum PersistenceMode {
    /** libpmem's {@code pmem_persist}: CPU cache flushes on a DAX mapping of real persistent memory. */
    PMEM_PERSIST("libpmem pmem_persist (DAX persistent memory)"),
    /** libpmem's {@code pmem_msync}: msync(2) of the pages, for a file that is not persistent memory. */
    PMEM_MSYNC("libpmem pmem_msync (msync of the page cache)"),
    /** {@link java.lang.foreign.MemorySegment#force()}: msync(2) through the JDK, when libpmem is absent. */
    FORCE("MemorySegment.force (msync through the JDK)"),
    /**
     * Nothing to flush: the pool is on tmpfs, whose pages are the file. A process crash loses
     * nothing (the page cache outlives the process, and stores are ordered by the engine's
     * volatile/CAS writes); a power cut loses the whole file whatever is flushed. msync there is a
     * system call that buys no durability, measured to cap write throughput (see docs/USAGE.md, "Durability modes").
     */
    MEMORY("none needed: tmpfs (survives process crashes, not power loss)");

    private final String description;

    PersistenceMode(String description) {
        this.description = description;
    }

    /** {@return a human-readable description, as printed by {@code stats()} and the demo} */
    public String description() {
        return description;
    }
}
