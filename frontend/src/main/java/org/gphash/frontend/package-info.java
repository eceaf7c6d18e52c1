/**
 * The front end for many callers, which the index puts in front of its engine
 * ({@link org.gphash.spi.FrontEnd}, found through {@link java.util.ServiceLoader}): single calls
 * merged into the engine's batches ({@link org.gphash.frontend.CoalescingEngine}: the callers' side;
 * {@link org.gphash.frontend.CoalescingQueue}: gathering a batch; {@link org.gphash.frontend.CoalescerDispatcher}:
 * running it; {@link org.gphash.frontend.CallerCompletions}: handing results back), the host read
 * cache of hot keys ({@link org.gphash.frontend.HostReadCache}, Caffeine), and the counting and timing
 * of calls for {@code recordStats()} ({@link org.gphash.frontend.RecordingEngine}, HdrHistogram).
 */
package org.gphash.frontend;
