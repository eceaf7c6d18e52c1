/**
 * The pool file: its on-media format (headers, close record, slot words), mapping, locking and the
 * persisters that make writes durable. {@code org.gphash.error} holds the exceptions the API throws;
 * the other packages are implementation, exported only to the engines and tools built on them.
 */
module org.gphash.persistence {
    requires org.gphash.natives;

    exports org.gphash.error;
    exports org.gphash.format to org.gphash, org.gphash.index, org.gphash.cuda, org.gphash.recovery, org.gphash.cluster;
    exports org.gphash.persistence to org.gphash, org.gphash.index, org.gphash.cuda, org.gphash.recovery, org.gphash.crashtest;
}
