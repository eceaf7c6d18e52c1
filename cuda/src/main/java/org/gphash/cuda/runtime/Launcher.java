package org.gphash.cuda.runtime;

import static jcuda.driver.JCudaDriver.cuLaunchCooperativeKernel;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;

import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUstream;

/** Launches a kernel over one thread per item, with its parameter structs passed by value. */
public final class Launcher {

    public static final int BLOCK = 256;

    private Launcher() {
    }

    public static void launch(CUfunction f, long threads, CUstream stream, byte[]... structs) {
        if (threads <= 0) {
            return;
        }
        long blocks = (threads + BLOCK - 1) / BLOCK;
        if (blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(threads + " threads are more than one launch takes");
        }
        launchBlocks(f, (int) blocks, stream, structs);
    }

    /** Launches {@code blocks} blocks of {@link #BLOCK} threads (for kernels that stride over their work). */
    public static void launchBlocks(CUfunction f, int blocks, CUstream stream, byte[]... structs) {
        Pointer[] params = new Pointer[structs.length];
        for (int i = 0; i < structs.length; i++) {
            params[i] = Pointer.to(structs[i]);
        }
        cuLaunchKernel(f, blocks, 1, 1, BLOCK, 1, 1, 0, stream, Pointer.to(params), null);
    }

    /**
     * Launches {@code blocks} blocks of {@link #BLOCK} threads cooperatively: every block resident at
     * once, so that the kernel may wait at grid barriers ({@code cooperative_groups::this_grid().sync()}).
     * {@code blocks} must not exceed {@link CudaRuntime#residentBlocks}.
     */
    public static void launchCooperative(CUfunction f, int blocks, CUstream stream, byte[]... structs) {
        Pointer[] params = new Pointer[structs.length];
        for (int i = 0; i < structs.length; i++) {
            params[i] = Pointer.to(structs[i]);
        }
        cuLaunchCooperativeKernel(f, blocks, 1, 1, BLOCK, 1, 1, 0, stream, Pointer.to(params));
    }
}
