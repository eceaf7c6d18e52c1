/**
 * Latency percentiles for {@code GPHashIndex.Builder.recordStats()}, recorded with HdrHistogram:
 * put this module (org.gphash:gphash-stats) on the class or module path to use it.
 */
package org.gphash.stats;
