/**
 * FFM bindings, in jextract's shape, to PMDK's libpmem and the few libc calls the engine makes
 * (mmap, msync, flock, ...). Implementation only: its packages are exported to the persistence
 * module alone. Callers need native access ({@code --enable-native-access=org.gphash.natives}).
 */
module org.gphash.natives {
    exports org.gphash.pmem to org.gphash.persistence;
    exports org.gphash.posix to org.gphash.persistence;
}
