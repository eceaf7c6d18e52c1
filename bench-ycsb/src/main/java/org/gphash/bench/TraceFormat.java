package org.gphash.bench;

/**
 * The trace file format, versions 1 and 2 (docs/TRACES.md describes it for other tools). All integers
 * little-endian.
 *
 * <pre>
 * header:  8 bytes  magic "GPHTRACE"
 *          u16      version (1: every value of the value size; 2: values of any length up to it)
 *          u16      key size in bytes (1..1024)
 *          u32      value size in bytes (1..2^20)
 *          u32      length L of the description
 *          L bytes  description, UTF-8 (what generated the trace, with its parameters)
 * batches: u32      number of operations N (1..2^20); 0 ends the trace
 *          N records: u8 kind (0 GET, 1 PUT, 2 INSERT, 3 UPDATE, 4 DELETE, 5 READ_MODIFY_WRITE),
 *                     key, then the value for PUT, INSERT, UPDATE and READ_MODIFY_WRITE
 *                     (version 2: a u32 length, at most the value size, then that many bytes)
 * </pre>
 *
 * A batch is the unit a replayer hands to the store at once: the generator's batch boundaries
 * (a DLRM training batch, a PageRank vertex block) are kept, and a later batch may depend on an
 * earlier one's results.
 */
public final class TraceFormat {

    static final byte[] MAGIC = {'G', 'P', 'H', 'T', 'R', 'A', 'C', 'E'};
    static final int VERSION = 1;
    /** Values of their own lengths, each behind its u32 length. */
    static final int VERSION_LENGTHS = 2;
    static final int MAX_KEY_SIZE = 1024;
    static final int MAX_VALUE_SIZE = 1 << 20;
    static final int MAX_BATCH = 1 << 20;
    static final int MAX_DESCRIPTION = 1 << 16;

    private TraceFormat() {
    }

    /**
     * What a trace's header says.
     *
     * @param keySize     bytes per key
     * @param valueSize   bytes per value
     * @param description what generated it
     * @param lengths     whether each value has its own length, up to {@code valueSize} (version 2)
     */
    public record Header(int keySize, int valueSize, String description, boolean lengths) {

        /** Values of the value size (version 1). */
        public Header(int keySize, int valueSize, String description) {
            this(keySize, valueSize, description, false);
        }

        /** The first word of the description ("dlrm", "pagerank"): the workload label in reports. */
        public String label() {
            String d = description.strip();
            int space = d.indexOf(' ');
            return d.isEmpty() ? "trace" : space < 0 ? d : d.substring(0, space);
        }
    }
}
