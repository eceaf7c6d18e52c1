package org.gphash.cuda.staging;

/**
 * A chunk the pipeline queued: its buffer slot, its size, the launch capacity it was queued with,
 * and whether it reads and writes; what a {@link HostLane} holds until the pipeline's await reports
 * the chunk's counters. Here, with the lanes, so that staging does not depend on the pipeline.
 *
 * @param slot     the pipeline's buffer slot
 * @param n        operations in the chunk
 * @param capacity operations the launch was sized for
 * @param reads    whether the chunk holds reads
 * @param writes   whether the chunk holds writes
 */
public record PipelineTicket(int slot, long n, long capacity, boolean reads, boolean writes) {
}
