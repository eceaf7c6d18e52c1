/**
 * The pool file: its on-media format (headers, close record, slot words), mapping, locking and the
 * persisters that make writes durable. It builds on the API module for the types the API exposes
 * (exceptions, geometry, persistence mode); its own packages are implementation, exported only to
 * the engines and tools built on them.
 */
module org.gphash.persistence {
    requires transitive org.gphash;
    requires org.gphash.natives;

    exports org.gphash.format to org.gphash.index, org.gphash.cuda, org.gphash.recovery, org.gphash.cluster;
    exports org.gphash.persistence to org.gphash.index, org.gphash.cuda, org.gphash.recovery, org.gphash.crashtest;
}
