package org.gphash.persistence;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

import org.gphash.error.PoolIoException;

/**
 * A pool file's mapping into memory and the persister chosen for it (the pool file's memory side).
 * On tmpfs a writable pool is mapped into reserved address space ({@link ReservedMapping}) and grows
 * in place, keeping its address; elsewhere, or when no address space can be reserved, the JDK maps
 * it and a growth replaces the mapping. The {@link MappingListener} hears of every change
 * before the old mapping goes and after the new one is there. The caller (PoolFile) serialises calls.
 */
final class PoolMapping {

    private final Path path;
    /** The locked file's descriptor path (/proc/self/fd/N): what reserved mappings map. */
    private final Path descriptorPath;
    private final FileChannel channel;
    private final boolean readOnly;
    private final boolean onTmpfs;
    private final boolean preferJdkPersist;
    private Arena arena;
    /** The mapping in reserved address space, where the file grows in place ({@link #growsInPlace()}); else null. */
    private ReservedMapping reservation;
    /** No address space could be reserved for this file: it is mapped through the JDK instead. */
    private boolean reservationRefused;
    /**
     * Wraps every persister a mapping chooses; the identity unless the crash harness installs a
     * shadow (simulated power failure). Process-wide because the harness runs one pool per worker JVM.
     */
    private static volatile PersisterDecorator persisterDecorator = PersisterDecorator.NONE;

    /** Installs {@code decorator} for every mapping made from now on ({@code PoolFile.decoratePersisters}). */
    static void decoratePersisters(PersisterDecorator decorator) {
        persisterDecorator = decorator;
    }

    private volatile MappingListener listener;
    private volatile MemorySegment segment;
    private volatile Persister persister;

    PoolMapping(Path path, Path descriptorPath, FileChannel channel, boolean readOnly, boolean onTmpfs,
                boolean preferJdkPersist) {
        this.path = path;
        this.descriptorPath = descriptorPath;
        this.channel = channel;
        this.readOnly = readOnly;
        this.onTmpfs = onTmpfs;
        this.preferJdkPersist = preferJdkPersist;
    }

    void setListener(MappingListener listener) {
        this.listener = listener;
    }

    /** {@return the current mapping, or null before the first and after close} */
    MemorySegment segment() {
        return segment;
    }

    Persister persister() {
        return persister;
    }

    /** {@return the mapped length in bytes (0 for an empty file)} */
    long size() {
        MemorySegment s = segment;
        return s == null ? 0 : s.byteSize();
    }

    /**
     * Whether this file is mapped into reserved address space and grown in place: writable pools on
     * tmpfs, persisted without msync (the mapping is not the JDK's, so {@code MemorySegment.force()}
     * does not apply to it).
     */
    private boolean growsInPlace() {
        return !readOnly && onTmpfs && !preferJdkPersist && !reservationRefused;
    }

    /** Whether a growth to {@code size} would keep the mapping where it is (its reservation has room). */
    boolean growsInPlaceTo(long size) {
        ReservedMapping r = reservation;
        return r != null && r.canGrowTo(size);
    }

    /** Maps the first {@code size} bytes of the file: in place where it can, else anew (the old mapping goes). */
    void map(long size) {
        if (growsInPlace() && mapReserved(size)) {
            return;
        }
        Arena newArena = Arena.ofShared();
        MemorySegment mapped;
        try {
            mapped = channel.map(readOnly ? FileChannel.MapMode.READ_ONLY : FileChannel.MapMode.READ_WRITE, 0, size,
                    newArena);
        } catch (IOException e) {
            newArena.close();
            throw new PoolIoException("cannot map pool " + path + " (" + size + " bytes): " + e, e);
        }
        MemorySegment oldSegment = segment;
        Arena old = arena;
        ReservedMapping oldReservation = reservation;  // set when the reservation could not grow any more
        MappingListener l = listener;
        if ((old != null || oldReservation != null) && oldSegment != null && l != null) {
            l.beforeUnmap(oldSegment);
        }
        segment = mapped;
        arena = newArena;
        if (old != null) {
            old.close();
        }
        if (oldReservation != null) {
            reservation = null;
            oldReservation.close();
        }
        persister = readOnly ? Persisters.readOnly(path) : chosenPersister();
        if (l != null) {
            l.afterMap(segment);
        }
    }

    /**
     * {@link #map} for a file that grows in place: extends the reservation's mapping, or makes a new
     * one. False, having changed nothing, when no address space can be reserved (a process limited by
     * {@code ulimit -v}, say): this file is then mapped through the JDK from now on.
     */
    private boolean mapReserved(long size) {
        MappingListener l = listener;
        ReservedMapping current = reservation;
        if (current != null && current.canGrowTo(size)) {
            long previous = current.mapped();
            current.growTo(descriptorPath, size);
            segment = current.segment();
            persister = chosenPersister();
            if (l != null) {
                l.afterGrowInPlace(segment, previous);
            }
            return true;
        }
        // The first mapping, or a growth past the reservation: a new one, and the old one goes.
        ReservedMapping next = ReservedMapping.map(path, descriptorPath, size);
        if (next == null) {
            reservationRefused = true;
            return false;
        }
        MemorySegment oldSegment = segment;
        if (current != null && oldSegment != null && l != null) {
            l.beforeUnmap(oldSegment);
        }
        segment = next.segment();
        reservation = next;
        if (current != null) {
            current.close();
        }
        persister = chosenPersister();
        if (l != null) {
            l.afterMap(segment);
        }
        return true;
    }

    private Persister chosenPersister() {
        return persisterDecorator.decorate(path, segment, Persisters.choose(segment, preferJdkPersist, onTmpfs));
    }

    /** Forces the whole mapping to the file (msync, or the reservation's own sync). */
    void sync() {
        MemorySegment s = segment;
        if (reservation != null) {
            reservation.sync();
        } else if (s != null) {
            s.force();
        }
    }

    /** Tells the listener, then unmaps. Writes nothing. */
    void close() {
        MemorySegment last = segment;
        segment = null;
        MappingListener l = listener;
        if (l != null && last != null) {
            l.beforeUnmap(last);
        }
        if (arena != null) {
            arena.close();
        }
        if (reservation != null) {
            reservation.close();
            reservation = null;
        }
    }
}
