package org.gphash.crashtest;

import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

import org.gphash.spi.CrashPoint;

/** What the rounds of one run added up to. */
final class Tally {
    long rounds;
    /** Rounds whose worker opened a pool left unrecovered (Driver: verified on a copy). */
    long repairRounds;
    long kills;
    long powerFailures;
    long targetedKills;
    long killsBeforeOpen;
    long killsInRecovery;
    long killsInResize;
    long killsInReclamation;
    long killsBetweenOperations;
    long opsVerified;
    /** Acknowledged operations verified, by worker thread. */
    final Map<Integer, Long> opsVerifiedByThread = new TreeMap<>();
    long lost;
    long torn;
    long leakedBytes;
    long checkFailures;
    long inflightApplied;
    long insertSlotsCleared;
    long duplicatesRemoved;
    long resizesResumed;
    long resizes;
    /** Rounds whose worker closed the pool after its operations, and how they ended. */
    long closeRounds;
    long crashesInClose;
    long closedCleanly;
    /** With a journal: power cuts after kills (pool deleted, journal cut), rebuilds, writes replayed, torn tails cut. */
    long journalPowerCuts;
    long journalRebuilds;
    long journalOpsReplayed;
    long journalTornCuts;
    long journalCheckpointsLoaded;
    long journalBytesCut;
    final Map<CrashPoint, Long> lastPointAtKill = new EnumMap<>(CrashPoint.class);
    final Map<String, Long> powerFailSites = new TreeMap<>();

    boolean failed() {
        return lost != 0 || torn != 0 || leakedBytes != 0 || checkFailures != 0;
    }
}
