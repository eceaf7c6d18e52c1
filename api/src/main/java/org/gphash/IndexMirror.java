package org.gphash;

/**
 * Whether the GPU engine keeps a copy of the table's index (every slot's meta word and key) in GPU
 * memory, so that probes never cross PCIe and only values do (docs/DESIGN-GPU.md, "The GPU engine, v2").
 * The copy is volatile: loaded from the pool when the engine opens it, kept exact by every write.
 * {@code IndexStats.indexPlacement()} says which mode runs and why. The CPU engine has no mirror.
 */
public enum IndexMirror {
    /** Use the mirror when the GPU has the memory for it (and its batch buffers); else probe the pool. */
    AUTO,
    /** Use the mirror; opening fails with a clear message when the GPU has too little free memory. */
    REQUIRED,
    /** Probe the pool (the engine as the GPHash paper has it, with BktCache over pool buckets). */
    OFF
}
