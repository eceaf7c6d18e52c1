package org.gphash.cuda.runtime;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuDeviceTotalMem;
import static jcuda.driver.JCudaDriver.cuGraphDestroy;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;
import static jcuda.driver.JCudaDriver.cuStreamBeginCapture;
import static jcuda.driver.JCudaDriver.cuStreamEndCapture;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUgraph;
import jcuda.driver.CUmodule;
import jcuda.driver.CUpointer_attribute;
import jcuda.driver.CUstream;
import jcuda.driver.CUstreamCaptureMode;
import jcuda.driver.JCudaDriver;
import org.gphash.BackendUnavailableException;

/**
 * The process's CUDA driver state for one GPU: its primary context and the kernels loaded from the
 * fatbin in this jar. One per device ordinal, initialised on first use ({@link #get(int)}; an engine
 * holds its device's and binds it on every thread that enters it, so engines on several GPUs share a
 * process, issue 30). Every failure (no driver, no GPU, no such ordinal, a GPU that cannot address
 * registered host memory directly, a build without kernels) becomes one
 * {@link BackendUnavailableException} saying which.
 */
public final class CudaRuntime {

    public static final String FATBIN_RESOURCE = "gphash.fatbin";

    /** The most GPUs one process addresses (the runtimes are kept per ordinal). */
    public static final int MAX_DEVICES = 64;

    private static final CudaRuntime[] instances = new CudaRuntime[MAX_DEVICES];
    private static final RuntimeException[] failures = new RuntimeException[MAX_DEVICES];
    /** The driver's failure to start, or the device count once it started (guarded by the class). */
    private static RuntimeException driverFailure;
    private static int deviceCount = -1;
    /** How long the driver's start took: loading JCuda's native library, then cuInit (nanoseconds). */
    private static long[] driverStart = {0, 0};

    /** The GPU's ordinal as the driver numbers them (after CUDA_VISIBLE_DEVICES). */
    public final int ordinal;
    /** Held around captures into graphs and context-wide synchronisations, which CUDA forbids together. */
    private final ReentrantLock contextWide = new ReentrantLock();
    public final CUcontext context;
    public final String deviceName;
    /** The GPU's streaming multiprocessors. */
    public final int multiprocessors;
    private final CUmodule module;
    public final CUfunction batch;
    public final CUfunction groupBatch;
    public final CUfunction countWrites;
    public final CUfunction assignBlocks;
    public final CUfunction finishDeviceBatch;
    public final CUfunction recoverLevel;
    public final CUfunction markLevel;
    public final CUfunction rehashBottom;
    public final CUfunction cacheHistogram;
    public final CUfunction cachePickDigit;
    public final CUfunction cacheSelect;
    public final CUfunction cachePlan;
    public final CUfunction cacheFetch;

    private CudaRuntime(int ordinal, CUcontext context, String deviceName, int multiprocessors, CUmodule module) {
        this.ordinal = ordinal;
        this.multiprocessors = multiprocessors;
        this.context = context;
        this.deviceName = deviceName;
        this.module = module;
        this.batch = function(module, "gphash_batch");
        this.groupBatch = function(module, "gphash_group_batch");
        this.countWrites = function(module, "gphash_count_writes");
        this.assignBlocks = function(module, "gphash_assign_blocks");
        this.finishDeviceBatch = function(module, "gphash_finish_device_batch");
        this.recoverLevel = function(module, "gphash_recover_level");
        this.markLevel = function(module, "gphash_mark_level");
        this.rehashBottom = function(module, "gphash_rehash_bottom");
        this.cacheHistogram = function(module, "gphash_cache_histogram");
        this.cachePickDigit = function(module, "gphash_cache_pick_digit");
        this.cacheSelect = function(module, "gphash_cache_select");
        this.cachePlan = function(module, "gphash_cache_plan");
        this.cacheFetch = function(module, "gphash_cache_fetch");
    }

    /** A kernel of the fatbin by its extern "C" name. */
    /**
     * The most blocks of {@code blockSize} threads of {@code f} the GPU holds resident at once: the
     * largest grid a cooperative launch of it may have.
     */
    public int residentBlocks(CUfunction f, int blockSize) {
        int[] perMultiprocessor = new int[1];
        cuOccupancyMaxActiveBlocksPerMultiprocessor(perMultiprocessor, f, blockSize, 0);
        return Math.max(1, perMultiprocessor[0]) * multiprocessors;
    }

    public CUfunction function(String name) {
        return function(module, name);
    }

    private static CUfunction function(CUmodule module, String name) {
        CUfunction f = new CUfunction();
        cuModuleGetFunction(f, module, name);
        return f;
    }

    /** The runtime of GPU 0, initialised on first call; throws BackendUnavailableException where there is none. */
    public static CudaRuntime get() {
        return get(0);
    }

    /**
     * The runtime of GPU {@code ordinal}, initialised on first call.
     *
     * @param ordinal the GPU, 0 to {@link #deviceCount()} - 1
     * @return its runtime
     * @throws BackendUnavailableException where there is no driver, no such GPU, or it cannot run the engine
     */
    public static CudaRuntime get(int ordinal) {
        if (ordinal >= 0 && ordinal < MAX_DEVICES) {
            CudaRuntime r = instances[ordinal];  // published under the class lock; final fields make a racy read safe
            if (r != null) {
                return r;
            }
        }
        synchronized (CudaRuntime.class) {
            checkOrdinal(ordinal, startDriver());
            if (instances[ordinal] == null && failures[ordinal] == null) {
                try {
                    instances[ordinal] = initialise(ordinal);
                } catch (RuntimeException e) {
                    failures[ordinal] = e;
                }
            }
            if (failures[ordinal] != null) {
                throw failures[ordinal];
            }
            return instances[ordinal];
        }
    }

    /**
     * Checks, without making a context or loading the kernels, that GPU {@code ordinal} can run the
     * engine: the driver starts, the GPU is there, addresses registered host memory, is a Hopper or
     * newer, and this jar holds the kernels. What {@link #get(int)} then adds (the context, the module)
     * is the slow part of a GPU's start, which an open may let run while it serves calls on the host;
     * every reason to refuse the GPU that can be known earlier is known here, before a pool is written.
     *
     * @return the GPU's memory in bytes
     * @throws BackendUnavailableException as {@link #get(int)} would, for the same reasons
     */
    public static long checkUsable(int ordinal) {
        synchronized (CudaRuntime.class) {
            checkOrdinal(ordinal, startDriver());
            if (failures[ordinal] != null) {
                throw failures[ordinal];
            }
            try {
                CUdevice device = new CUdevice();
                cuDeviceGet(device, ordinal);
                checkDevice(device);
                if (CudaRuntime.class.getResource("/org/gphash/cuda/" + FATBIN_RESOURCE) == null) {
                    throw noKernels();
                }
                long[] bytes = new long[1];
                cuDeviceTotalMem(bytes, device);
                return bytes[0];
            } catch (BackendUnavailableException e) {
                throw e;
            } catch (RuntimeException e) {
                throw GpuUnavailable.because("GPU " + ordinal + " could not be queried: " + e.getMessage(), e);
            }
        }
    }

    private static void checkOrdinal(int ordinal, int count) {
        if (ordinal < 0 || ordinal >= count) {
            throw GpuUnavailable.because("GPU " + ordinal + " was asked for, but the CUDA driver sees " + count
                    + (count == 1 ? " GPU (ordinal 0)" : " GPUs (ordinals 0 to " + (count - 1) + ")"), null);
        }
    }

    /** {@return how long the driver's start took, in nanoseconds: loading JCuda's native library, then cuInit (0s before)} */
    public static synchronized long[] driverStartNanos() {
        return driverStart.clone();
    }

    /** Whether {@link #startDriverBeside} has begun the driver's start. */
    private static final AtomicBoolean driverStartBegun = new AtomicBoolean();

    /**
     * Begins the driver's start on a daemon thread of its own, once per process, and returns at once:
     * for an open that does other work first. Whoever needs the driver then waits for that start (it
     * holds the class's lock) rather than making its own; a driver that cannot start fails there with
     * its reason, as before.
     */
    public static void startDriverBeside() {
        if (driverStartBegun.compareAndSet(false, true)) {
            Thread.ofPlatform().daemon().name("gphash-cuda-driver-start").start(CudaRuntime::deviceCount);
        }
    }

    /** {@return whether {@link #startDriverBeside} has begun the driver's start} */
    public static boolean driverStartBegunBeside() {
        return driverStartBegun.get();
    }

    /** {@return the GPUs the driver sees (0 where there is no driver)} */
    public static int deviceCount() {
        synchronized (CudaRuntime.class) {
            try {
                return startDriver();
            } catch (RuntimeException e) {
                return 0;
            }
        }
    }

    /** Whether a usable GPU is present (for tests that skip without one). */
    public static boolean available() {
        try {
            get();
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Makes the context current on the calling thread (JCuda calls act on the thread's context). */
    public void bind() {
        cuCtxSetCurrent(context);
    }

    /**
     * Waits for all work of this context, never while one of its streams is being captured into a
     * graph: CUDA refuses a context-wide synchronisation during any capture in the context
     * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), and several engines share a GPU's context (the shards
     * of a sharded index on fewer GPUs, two indexes of one process), so one engine's capture met
     * another's open, resize or close.
     */
    public void synchronizeContext() {
        contextWide.lock();
        try {
            cuCtxSynchronize();
        } finally {
            contextWide.unlock();
        }
    }

    /**
     * Captures what {@code queue} queues on {@code stream} into {@code graph}, never during a
     * context-wide synchronisation ({@link #synchronizeContext}). The capture is ended whatever
     * {@code queue} throws, so that a failed capture leaves no stream capturing behind it (which would
     * fail every later synchronisation of the context).
     */
    public void capture(CUstream stream, Runnable queue, CUgraph graph) {
        contextWide.lock();
        try {
            cuStreamBeginCapture(stream, CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
            try {
                queue.run();
            } catch (RuntimeException e) {
                try {
                    cuStreamEndCapture(stream, graph);
                    cuGraphDestroy(graph);
                } catch (RuntimeException ended) {
                    e.addSuppressed(ended);
                }
                throw e;
            }
            cuStreamEndCapture(stream, graph);
        } finally {
            contextWide.unlock();
        }
    }

    /** Starts the driver once; returns the GPUs it sees, or throws why it cannot start (the same each time). */
    private static int startDriver() {
        if (driverFailure != null) {
            throw driverFailure;
        }
        if (deviceCount >= 0) {
            return deviceCount;
        }
        try {
            long t0 = System.nanoTime();
            JCudaDriver.setExceptionsEnabled(true);  // loads JCuda's native library
            long t1 = System.nanoTime();
            cuInit(0);
            driverStart = new long[] {t1 - t0, System.nanoTime() - t1};
            int[] count = new int[1];
            cuDeviceGetCount(count);
            if (count[0] == 0) {
                throw GpuUnavailable.because("the CUDA driver sees no GPU", null);
            }
            deviceCount = Math.min(count[0], MAX_DEVICES);
            return deviceCount;
        } catch (LinkageError e) {
            driverFailure = GpuUnavailable.because("no CUDA driver could be loaded (libcuda.so.1 and JCuda's natives): " + e, e);
        } catch (BackendUnavailableException e) {
            driverFailure = e;
        } catch (RuntimeException e) {
            driverFailure = GpuUnavailable.because("the CUDA driver did not initialise: " + e.getMessage(), e);
        }
        throw driverFailure;
    }

    private static CudaRuntime initialise(int ordinal) {
        byte[] fatbin = loadFatbin();
        CUdevice device = new CUdevice();
        cuDeviceGet(device, ordinal);
        String deviceName = checkDevice(device);
        int[] v = new int[1];
        cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
        int multiprocessors = v[0];
        CUcontext context = new CUcontext();
        cuDevicePrimaryCtxRetain(context, device);
        cuCtxSetCurrent(context);
        CUmodule module = new CUmodule();
        cuModuleLoadData(module, fatbin);
        return new CudaRuntime(ordinal, context, deviceName, multiprocessors, module);
    }

    /** {@return the GPU's name}, once it is known to address registered host memory and to be a Hopper or newer */
    private static String checkDevice(CUdevice device) {
        byte[] name = new byte[256];
        cuDeviceGetName(name, name.length, device);
        String deviceName = new String(name).trim().replace("\0", "");
        int[] v = new int[1];
        cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, device);
        if (v[0] == 0) {
            throw GpuUnavailable.because(deviceName + " cannot use host pointers for registered memory, which kernels "
                    + "need to address the pool directly", null);
        }
        cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
        if (v[0] < 9) {
            throw GpuUnavailable.because(deviceName + " has compute capability " + v[0] + ".x; the kernels are built for 9.0 "
                    + "(Hopper) and newer", null);
        }
        return deviceName;
    }

    private static BackendUnavailableException noKernels() {
        return GpuUnavailable.because("built without GPU kernels (" + FATBIN_RESOURCE + " is missing from the "
                + "gphash-cuda jar: the build found no nvcc, or had -Dgphash.skipKernels=true); rebuild on a "
                + "machine with the CUDA toolkit", null);
    }

    private static byte[] loadFatbin() {
        // The kernels sit beside the engine in the jar (org/gphash/cuda/), where build-kernels.sh puts them.
        try (InputStream in = CudaRuntime.class.getResourceAsStream("/org/gphash/cuda/" + FATBIN_RESOURCE)) {
            if (in == null) {
                throw noKernels();
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw GpuUnavailable.because("cannot read " + FATBIN_RESOURCE + ": " + e, e);
        }
    }

    /** The address of a device pointer the caller allocated (0 for null). */
    public static long address(CUdeviceptr p) {
        if (p == null) {
            return 0;
        }
        long[] a = new long[1];
        JCudaDriver.cuPointerGetAttribute(Pointer.to(a),
                CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p);
        return a[0];
    }
}
