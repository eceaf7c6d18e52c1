/**
 * How a host batch's columns reach the GPU. Every column crosses through one class,
 * {@link org.gphash.cuda.staging.StagedBuffer} (a device buffer and its pinned host twin), whoever
 * schedules it: the lanes here, the pipeline's one-launch small reads and writes. Columns are pinned in place when they are large
 * ({@link org.gphash.cuda.staging.BatchPinning}, {@link org.gphash.cuda.staging.HostColumns}), copied by
 * the calling thread before the engine's lock ({@link org.gphash.cuda.staging.CallerStaging}) or by a
 * lane's stream beside the GPU's work ({@link org.gphash.cuda.staging.HostLane},
 * the pool path's {@code StreamLane}); a batch prepared outside the lock and its chunks in
 * flight ({@link org.gphash.cuda.staging.PreparedBatch}, {@link org.gphash.cuda.staging.BatchInFlight});
 * the host time per stage ({@link org.gphash.cuda.staging.HostStageTimes}). Public for the engine's
 * other packages, not API.
 */
package org.gphash.cuda.staging;
