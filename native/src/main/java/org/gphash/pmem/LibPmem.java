package org.gphash.pmem;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * Bindings to {@code libpmem.so.1} in jextract's shape: {@code pmem_persist}, {@code pmem_flush},
 * {@code pmem_drain}, {@code pmem_msync},
 * {@code pmem_is_pmem}, {@code pmem_errormsg} and {@code pmem_check_version}.
 *
 * <p>The library is optional: {@link #isAvailable()} says whether it was found. Calling a function
 * when it is absent throws {@link IllegalStateException}. Lookup happens once, lazily, in the
 * holder class so that merely loading this class never touches the dynamic linker.
 */
@SuppressWarnings("restricted") // calling native code is this class's purpose; run with --enable-native-access
public final class LibPmem {

    /** The soname PMDK ships; Debian's package {@code libpmem1} provides it. */
    public static final String LIBRARY_NAME = "libpmem.so.1";

    private LibPmem() {
    }

    /** {@return whether {@code libpmem.so.1} could be loaded in this process} */
    public static boolean isAvailable() {
        return Holder.LOOKUP.isPresent();
    }

    /** {@return why the library is unavailable, or an empty string when it is available} */
    public static String unavailableReason() {
        return Holder.LOAD_ERROR;
    }

    // ---- void pmem_persist(const void *addr, size_t len) ----

    public static FunctionDescriptor pmem_persist$descriptor() {
        return Holder.PMEM_PERSIST_DESC;
    }

    public static MethodHandle pmem_persist$handle() {
        return require(Holder.PMEM_PERSIST);
    }

    /** Flushes CPU caches for the range; only valid on real persistent memory. */
    public static void pmem_persist(MemorySegment addr, long len) {
        try {
            pmem_persist$handle().invokeExact(addr, len);
        } catch (Throwable t) {
            throw rethrow("pmem_persist", t);
        }
    }

    // ---- void pmem_flush(const void *addr, size_t len) ----

    public static FunctionDescriptor pmem_flush$descriptor() {
        return Holder.PMEM_FLUSH_DESC;
    }

    public static MethodHandle pmem_flush$handle() {
        return require(Holder.PMEM_FLUSH);
    }

    /** Starts writing the range's cache lines back; durable only after {@link #pmem_drain()}. */
    public static void pmem_flush(MemorySegment addr, long len) {
        try {
            pmem_flush$handle().invokeExact(addr, len);
        } catch (Throwable t) {
            throw rethrow("pmem_flush", t);
        }
    }

    // ---- void pmem_drain(void) ----

    public static FunctionDescriptor pmem_drain$descriptor() {
        return Holder.PMEM_DRAIN_DESC;
    }

    public static MethodHandle pmem_drain$handle() {
        return require(Holder.PMEM_DRAIN);
    }

    /** Waits until every flush issued before it has reached persistence. */
    public static void pmem_drain() {
        try {
            pmem_drain$handle().invokeExact();
        } catch (Throwable t) {
            throw rethrow("pmem_drain", t);
        }
    }

    // ---- int pmem_msync(const void *addr, size_t len) ----

    public static FunctionDescriptor pmem_msync$descriptor() {
        return Holder.PMEM_MSYNC_DESC;
    }

    public static MethodHandle pmem_msync$handle() {
        return require(Holder.PMEM_MSYNC);
    }

    /** msync(2) of the page-aligned range around {@code addr}; returns 0 on success, -1 on error. */
    public static int pmem_msync(MemorySegment addr, long len) {
        try {
            return (int) pmem_msync$handle().invokeExact(addr, len);
        } catch (Throwable t) {
            throw rethrow("pmem_msync", t);
        }
    }

    // ---- int pmem_is_pmem(const void *addr, size_t len) ----

    public static FunctionDescriptor pmem_is_pmem$descriptor() {
        return Holder.PMEM_IS_PMEM_DESC;
    }

    public static MethodHandle pmem_is_pmem$handle() {
        return require(Holder.PMEM_IS_PMEM);
    }

    /** Non-zero when the whole range is persistent memory that CPU cache flushes make durable. */
    public static int pmem_is_pmem(MemorySegment addr, long len) {
        try {
            return (int) pmem_is_pmem$handle().invokeExact(addr, len);
        } catch (Throwable t) {
            throw rethrow("pmem_is_pmem", t);
        }
    }

    // ---- const char *pmem_errormsg(void) ----

    public static FunctionDescriptor pmem_errormsg$descriptor() {
        return Holder.PMEM_ERRORMSG_DESC;
    }

    public static MethodHandle pmem_errormsg$handle() {
        return require(Holder.PMEM_ERRORMSG);
    }

    public static MemorySegment pmem_errormsg() {
        try {
            return (MemorySegment) pmem_errormsg$handle().invokeExact();
        } catch (Throwable t) {
            throw rethrow("pmem_errormsg", t);
        }
    }

    // ---- const char *pmem_check_version(unsigned major_required, unsigned minor_required) ----

    public static FunctionDescriptor pmem_check_version$descriptor() {
        return Holder.PMEM_CHECK_VERSION_DESC;
    }

    public static MethodHandle pmem_check_version$handle() {
        return require(Holder.PMEM_CHECK_VERSION);
    }

    /** NULL when the loaded library satisfies the version, else a message. */
    public static MemorySegment pmem_check_version(int majorRequired, int minorRequired) {
        try {
            return (MemorySegment) pmem_check_version$handle().invokeExact(majorRequired, minorRequired);
        } catch (Throwable t) {
            throw rethrow("pmem_check_version", t);
        }
    }

    /** {@return the last libpmem error message as a Java string (empty when there is none)} */
    public static String lastError() {
        MemorySegment msg = pmem_errormsg();
        if (msg.equals(MemorySegment.NULL)) {
            return "";
        }
        return msg.reinterpret(4096).getString(0);
    }

    private static MethodHandle require(MethodHandle handle) {
        if (handle == null) {
            throw new IllegalStateException(LIBRARY_NAME + " is not available: " + Holder.LOAD_ERROR);
        }
        return handle;
    }

    private static RuntimeException rethrow(String function, Throwable t) {
        if (t instanceof RuntimeException re) {
            return re;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(function + " failed", t);
    }

    /** Lazily resolves the library and its symbols; all fields stay null when it is absent. */
    private static final class Holder {
        static final FunctionDescriptor PMEM_PERSIST_DESC = FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG);
        static final FunctionDescriptor PMEM_FLUSH_DESC = FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG);
        static final FunctionDescriptor PMEM_DRAIN_DESC = FunctionDescriptor.ofVoid();
        static final FunctionDescriptor PMEM_MSYNC_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG);
        static final FunctionDescriptor PMEM_IS_PMEM_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG);
        static final FunctionDescriptor PMEM_ERRORMSG_DESC = FunctionDescriptor.of(ADDRESS);
        static final FunctionDescriptor PMEM_CHECK_VERSION_DESC = FunctionDescriptor.of(ADDRESS, JAVA_INT, JAVA_INT);

        static final Optional<SymbolLookup> LOOKUP;
        static final String LOAD_ERROR;
        static final MethodHandle PMEM_PERSIST;
        static final MethodHandle PMEM_FLUSH;
        static final MethodHandle PMEM_DRAIN;
        static final MethodHandle PMEM_MSYNC;
        static final MethodHandle PMEM_IS_PMEM;
        static final MethodHandle PMEM_ERRORMSG;
        static final MethodHandle PMEM_CHECK_VERSION;

        static {
            Optional<SymbolLookup> lookup = Optional.empty();
            String error = "";
            try {
                // The global arena keeps the library loaded for the life of the process, as jextract does.
                lookup = Optional.of(SymbolLookup.libraryLookup(LIBRARY_NAME, Arena.global()));
            } catch (IllegalArgumentException | IllegalCallerException e) {
                error = e.getMessage() == null ? e.toString() : e.getMessage();
            }
            LOOKUP = lookup;
            LOAD_ERROR = error;
            Linker linker = Linker.nativeLinker();
            PMEM_PERSIST = bind(linker, lookup, "pmem_persist", PMEM_PERSIST_DESC, Linker.Option.critical(false));
            PMEM_FLUSH = bind(linker, lookup, "pmem_flush", PMEM_FLUSH_DESC, Linker.Option.critical(false));
            PMEM_DRAIN = bind(linker, lookup, "pmem_drain", PMEM_DRAIN_DESC, Linker.Option.critical(false));
            PMEM_MSYNC = bind(linker, lookup, "pmem_msync", PMEM_MSYNC_DESC);
            PMEM_IS_PMEM = bind(linker, lookup, "pmem_is_pmem", PMEM_IS_PMEM_DESC);
            PMEM_ERRORMSG = bind(linker, lookup, "pmem_errormsg", PMEM_ERRORMSG_DESC);
            PMEM_CHECK_VERSION = bind(linker, lookup, "pmem_check_version", PMEM_CHECK_VERSION_DESC);
        }

        private static MethodHandle bind(Linker linker, Optional<SymbolLookup> lookup, String name,
                                         FunctionDescriptor descriptor, Linker.Option... options) {
            return lookup.flatMap(l -> l.find(name))
                    .map(symbol -> linker.downcallHandle(symbol, descriptor, options))
                    .orElse(null);
        }
    }
}
