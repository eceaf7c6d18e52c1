package org.gphash.posix;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Bindings to the C library in jextract's shape: {@code open}, {@code close}, {@code flock},
 * {@code getuid}, {@code strerror}, and {@code mmap}, {@code munmap} and {@code msync} (a pool
 * mapped into reserved address space, so that it grows in place), with {@code errno} captured by the linker (the JVM may overwrite the
 * thread's errno between a call and a later read of it).
 *
 * <p>The constants are Linux's (they are the same on x86-64 and aarch64); the engine runs on Linux.
 */
@SuppressWarnings("restricted") // calling native code is this class's purpose; run with --enable-native-access
public final class LibC {

    public static final int O_RDONLY = 0;
    public static final int O_RDWR = 2;
    public static final int O_CREAT = 0100;
    public static final int O_EXCL = 0200;
    public static final int O_NONBLOCK = 04000;
    public static final int O_NOFOLLOW = 0400000;
    public static final int O_CLOEXEC = 02000000;

    public static final int LOCK_SH = 1;
    public static final int LOCK_EX = 2;
    public static final int LOCK_NB = 4;
    public static final int LOCK_UN = 8;

    public static final int PROT_NONE = 0;
    public static final int PROT_READ = 1;
    public static final int PROT_WRITE = 2;
    public static final int MAP_SHARED = 0x01;
    public static final int MAP_PRIVATE = 0x02;
    public static final int MAP_FIXED = 0x10;
    public static final int MAP_ANONYMOUS = 0x20;
    public static final int MAP_NORESERVE = 0x4000;
    public static final int MS_SYNC = 4;

    public static final int EEXIST = 17;
    public static final int EINTR = 4;
    public static final int EWOULDBLOCK = 11;
    public static final int ELOOP = 40;
    public static final int ENOENT = 2;

    private LibC() {
    }

    /** The result of a call that sets errno on failure: its return value and the errno it left. */
    public record Result(int value, int errno) {
        public boolean failed() {
            return value < 0;
        }
    }

    // ---- int open(const char *path, int flags, ... /* mode_t mode */) ----

    public static FunctionDescriptor open$descriptor() {
        return Holder.OPEN_DESC;
    }

    public static MethodHandle open$handle() {
        return Holder.OPEN;
    }

    /** {@code open(path, flags, mode)}: a descriptor, or -1 and the errno. */
    public static Result open(String path, int flags, int mode) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Holder.CAPTURE_LAYOUT);
            int fd = (int) Holder.OPEN.invokeExact(state, arena.allocateFrom(path), flags, mode);
            return new Result(fd, fd < 0 ? errno(state) : 0);
        } catch (Throwable t) {
            throw rethrow("open", t);
        }
    }

    // ---- int flock(int fd, int operation) ----

    public static FunctionDescriptor flock$descriptor() {
        return Holder.FLOCK_DESC;
    }

    public static MethodHandle flock$handle() {
        return Holder.FLOCK;
    }

    /** {@code flock(fd, operation)}: 0, or -1 and the errno. */
    public static Result flock(int fd, int operation) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Holder.CAPTURE_LAYOUT);
            int rc = (int) Holder.FLOCK.invokeExact(state, fd, operation);
            return new Result(rc, rc < 0 ? errno(state) : 0);
        } catch (Throwable t) {
            throw rethrow("flock", t);
        }
    }

    // ---- int close(int fd) ----

    public static FunctionDescriptor close$descriptor() {
        return Holder.CLOSE_DESC;
    }

    public static MethodHandle close$handle() {
        return Holder.CLOSE;
    }

    /** {@code close(fd)}: 0, or -1 and the errno. */
    public static Result close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Holder.CAPTURE_LAYOUT);
            int rc = (int) Holder.CLOSE.invokeExact(state, fd);
            return new Result(rc, rc < 0 ? errno(state) : 0);
        } catch (Throwable t) {
            throw rethrow("close", t);
        }
    }

    /** The result of {@code mmap}: the mapping's address, or -1 ({@code MAP_FAILED}) and the errno. */
    public record MapResult(long address, int errno) {
        public boolean failed() {
            return address == -1L;
        }
    }

    // ---- void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset) ----

    public static FunctionDescriptor mmap$descriptor() {
        return Holder.MMAP_DESC;
    }

    /** {@code mmap(address, length, prot, flags, fd, offset)}: the mapping's address, or MAP_FAILED and the errno. */
    public static MapResult mmap(long address, long length, int prot, int flags, int fd, long offset) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Holder.CAPTURE_LAYOUT);
            MemorySegment at = (MemorySegment) Holder.MMAP.invokeExact(state, MemorySegment.ofAddress(address), length,
                    prot, flags, fd, offset);
            long a = at.address();
            return new MapResult(a, a == -1L ? errno(state) : 0);
        } catch (Throwable t) {
            throw rethrow("mmap", t);
        }
    }

    // ---- int munmap(void *addr, size_t length) ----

    public static FunctionDescriptor munmap$descriptor() {
        return Holder.MUNMAP_DESC;
    }

    /** {@code munmap(address, length)}: 0, or -1 and the errno. */
    public static Result munmap(long address, long length) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Holder.CAPTURE_LAYOUT);
            int rc = (int) Holder.MUNMAP.invokeExact(state, MemorySegment.ofAddress(address), length);
            return new Result(rc, rc < 0 ? errno(state) : 0);
        } catch (Throwable t) {
            throw rethrow("munmap", t);
        }
    }

    // ---- int msync(void *addr, size_t length, int flags) ----

    public static FunctionDescriptor msync$descriptor() {
        return Holder.MSYNC_DESC;
    }

    /** {@code msync(address, length, flags)} (address page-aligned): 0, or -1 and the errno. */
    public static Result msync(long address, long length, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Holder.CAPTURE_LAYOUT);
            int rc = (int) Holder.MSYNC.invokeExact(state, MemorySegment.ofAddress(address), length, flags);
            return new Result(rc, rc < 0 ? errno(state) : 0);
        } catch (Throwable t) {
            throw rethrow("msync", t);
        }
    }

    // ---- uid_t getuid(void) ----

    public static FunctionDescriptor getuid$descriptor() {
        return Holder.GETUID_DESC;
    }

    /** {@return the real user id of this process} */
    public static int getuid() {
        try {
            return (int) Holder.GETUID.invokeExact();
        } catch (Throwable t) {
            throw rethrow("getuid", t);
        }
    }

    // ---- char *strerror(int errnum) ----

    public static FunctionDescriptor strerror$descriptor() {
        return Holder.STRERROR_DESC;
    }

    /** The C library's message for {@code errno}. */
    public static String strerror(int errno) {
        try {
            MemorySegment msg = (MemorySegment) Holder.STRERROR.invokeExact(errno);
            return msg.equals(MemorySegment.NULL) ? "errno " + errno : msg.reinterpret(1024).getString(0);
        } catch (Throwable t) {
            throw rethrow("strerror", t);
        }
    }

    private static int errno(MemorySegment state) {
        return (int) Holder.ERRNO.get(state, 0L);
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

    /** Resolves the symbols once, on first use, from the C library the JVM itself links. */
    private static final class Holder {
        static final FunctionDescriptor OPEN_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);
        static final FunctionDescriptor FLOCK_DESC = FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT);
        static final FunctionDescriptor CLOSE_DESC = FunctionDescriptor.of(JAVA_INT, JAVA_INT);
        static final FunctionDescriptor STRERROR_DESC = FunctionDescriptor.of(ADDRESS, JAVA_INT);
        static final FunctionDescriptor GETUID_DESC = FunctionDescriptor.of(JAVA_INT);
        static final FunctionDescriptor MMAP_DESC = FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT,
                JAVA_INT, JAVA_LONG);
        static final FunctionDescriptor MUNMAP_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG);
        static final FunctionDescriptor MSYNC_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT);

        static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
        static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));

        static final MethodHandle OPEN;
        static final MethodHandle FLOCK;
        static final MethodHandle CLOSE;
        static final MethodHandle STRERROR;
        static final MethodHandle GETUID;
        static final MethodHandle MMAP;
        static final MethodHandle MUNMAP;
        static final MethodHandle MSYNC;

        static {
            Linker linker = Linker.nativeLinker();
            Linker.Option errno = Linker.Option.captureCallState("errno");
            // open is variadic: the mode travels as the first variadic argument.
            OPEN = bind(linker, "open", OPEN_DESC, errno, Linker.Option.firstVariadicArg(2));
            FLOCK = bind(linker, "flock", FLOCK_DESC, errno);
            CLOSE = bind(linker, "close", CLOSE_DESC, errno);
            STRERROR = bind(linker, "strerror", STRERROR_DESC);
            GETUID = bind(linker, "getuid", GETUID_DESC);
            MMAP = bind(linker, "mmap", MMAP_DESC, errno);
            MUNMAP = bind(linker, "munmap", MUNMAP_DESC, errno);
            MSYNC = bind(linker, "msync", MSYNC_DESC, errno);
        }

        private static MethodHandle bind(Linker linker, String name, FunctionDescriptor descriptor,
                                         Linker.Option... options) {
            MemorySegment symbol = linker.defaultLookup().find(name)
                    .orElseThrow(() -> new IllegalStateException("the C library has no " + name));
            return linker.downcallHandle(symbol, descriptor, options);
        }
    }
}
