/**
 * The v2 batch pipeline over the HBM index mirror (CUDA in cuda/src/main/cuda/gphash/pipeline/): the
 * batch path ({@link org.gphash.cuda.pipeline.MirrorPath}), the stage launches and their graphs
 * ({@link org.gphash.cuda.pipeline.BatchPipeline}, {@link org.gphash.cuda.pipeline.StageGraphs}), its
 * device memory ({@link org.gphash.cuda.pipeline.PipelineBuffers}), sort and scans
 * ({@link org.gphash.cuda.pipeline.RadixSort}, {@link org.gphash.cuda.pipeline.DeviceScan}), the
 * mirror and the heap's bitmap in GPU memory ({@link org.gphash.cuda.pipeline.DeviceIndexMirror},
 * {@link org.gphash.cuda.pipeline.DeviceHeap}, {@link org.gphash.cuda.pipeline.HeapGrowthAhead}), small
 * batches in one launch ({@link org.gphash.cuda.pipeline.SmallReads},
 * {@link org.gphash.cuda.pipeline.SmallWrites}) and the per-stage profile
 * ({@link org.gphash.cuda.pipeline.StageProfile}). Public for the engine's other packages, not API.
 */
package org.gphash.cuda.pipeline;
