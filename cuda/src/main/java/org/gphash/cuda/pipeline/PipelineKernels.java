package org.gphash.cuda.pipeline;

import jcuda.driver.CUfunction;
import org.gphash.cuda.runtime.CudaRuntime;

/** The kernels of the v2 batch pipeline and of the device-wide primitives it is built on (pipeline/). */
public final class PipelineKernels {

    final CUfunction radixCount;
    final CUfunction radixScatter;
    final CUfunction radixBlockSort;
    final CUfunction scanReduceSum;
    final CUfunction scanPartialsSum;
    final CUfunction scanExclusiveSum;
    final CUfunction scanReduceMax;
    final CUfunction scanPartialsMax;
    final CUfunction scanInclusiveMax;
    final CUfunction scanSmallExclusiveSum;
    final CUfunction scanSmallInclusiveMax;
    final CUfunction countKinds;
    final CUfunction group;
    final CUfunction heads;
    final CUfunction identityGroups;
    final CUfunction decide;
    final CUfunction resolve;
    final CUfunction sourceInput;
    final CUfunction net;
    final CUfunction place;
    final CUfunction outcome;
    final CUfunction readList;
    final CUfunction binReads;
    final CUfunction gather;
    final CUfunction fanout;
    final CUfunction heapFreeCounts;
    final CUfunction take;
    final CUfunction takeNextFit;
    /** Format 3's take, its steps (pipeline/heap_segments.cuh). */
    final CUfunction valueClasses;
    final CUfunction takeWantPlan;
    final CUfunction takeHeld;
    final CUfunction takePlan;
    final CUfunction takeFresh;
    /** A check of format 3's heap after its steps, when batches are logged (GpuTuning.logBatches). */
    final CUfunction heapCheck;
    final CUfunction writeValues;
    final CUfunction binSlots;
    final CUfunction writeKeys;
    final CUfunction lineTable;
    final CUfunction publishPool;
    final CUfunction publishMirror;
    final CUfunction cacheMirror;
    final CUfunction retire;
    final CUfunction smallReads;
    final CUfunction smallWrites;
    final CUfunction smallWritesGrouped;
    final CUfunction buildTags;
    final CUfunction partGather;
    final CUfunction partScatter;
    /** The GPU these kernels were loaded on. */
    final CudaRuntime cuda;

    public PipelineKernels(CudaRuntime cuda) {
        this.cuda = cuda;
        radixCount = cuda.function("gphash_radix_count");
        radixScatter = cuda.function("gphash_radix_scatter");
        radixBlockSort = cuda.function("gphash_radix_block_sort");
        scanReduceSum = cuda.function("gphash_scan_reduce_sum_u32");
        scanPartialsSum = cuda.function("gphash_scan_partials_sum_u32");
        scanExclusiveSum = cuda.function("gphash_scan_exclusive_sum_u32");
        scanReduceMax = cuda.function("gphash_scan_reduce_max_i32");
        scanPartialsMax = cuda.function("gphash_scan_partials_max_i32");
        scanInclusiveMax = cuda.function("gphash_scan_inclusive_max_i32");
        scanSmallExclusiveSum = cuda.function("gphash_scan_small_exclusive_sum_u32");
        scanSmallInclusiveMax = cuda.function("gphash_scan_small_inclusive_max_i32");
        countKinds = cuda.function("gphash_pipe_count_kinds");
        group = cuda.function("gphash_pipe_group");
        heads = cuda.function("gphash_pipe_heads");
        identityGroups = cuda.function("gphash_pipe_identity_groups");
        decide = cuda.function("gphash_pipe_decide");
        resolve = cuda.function("gphash_pipe_resolve");
        sourceInput = cuda.function("gphash_pipe_source_input");
        net = cuda.function("gphash_pipe_net");
        place = cuda.function("gphash_pipe_place");
        outcome = cuda.function("gphash_pipe_outcome");
        readList = cuda.function("gphash_pipe_read_list");
        binReads = cuda.function("gphash_pipe_bin_reads");
        gather = cuda.function("gphash_pipe_gather");
        fanout = cuda.function("gphash_pipe_fanout");
        heapFreeCounts = cuda.function("gphash_heap_free_counts");
        take = cuda.function("gphash_pipe_take");
        takeNextFit = cuda.function("gphash_pipe_take_next_fit");
        valueClasses = cuda.function("gphash_pipe_value_classes");
        takeWantPlan = cuda.function("gphash_heap_take_want_plan");
        takeHeld = cuda.function("gphash_heap_take_held");
        takePlan = cuda.function("gphash_heap_take_plan");
        takeFresh = cuda.function("gphash_heap_take_fresh");
        heapCheck = cuda.function("gphash_heap_check");
        writeValues = cuda.function("gphash_pipe_write_values");
        binSlots = cuda.function("gphash_pipe_bin_slots");
        writeKeys = cuda.function("gphash_pipe_write_keys");
        lineTable = cuda.function("gphash_pipe_line_table");
        publishPool = cuda.function("gphash_pipe_publish_pool");
        publishMirror = cuda.function("gphash_pipe_publish_mirror");
        cacheMirror = cuda.function("gphash_pipe_cache_mirror");
        retire = cuda.function("gphash_pipe_retire");
        smallReads = cuda.function("gphash_pipe_small_reads");
        smallWrites = cuda.function("gphash_pipe_small_writes");
        smallWritesGrouped = cuda.function("gphash_pipe_small_writes_grouped");
        buildTags = cuda.function("gphash_mirror_build_tags");
        partGather = cuda.function("gphash_part_gather");
        partScatter = cuda.function("gphash_part_scatter");
    }
}
