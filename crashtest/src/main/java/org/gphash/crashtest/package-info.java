/**
 * The crash-test harness that SIGKILLs a worker JVM mid-workload (and simulates power failure) and verifies the recovered pool.
 */
package org.gphash.crashtest;
