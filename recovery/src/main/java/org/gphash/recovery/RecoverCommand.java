package org.gphash.recovery;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import org.gphash.GPHashIndex;
import org.gphash.RecoveryReport;
import org.gphash.cli.Cli;
import org.gphash.cli.Json;
import org.gphash.cli.Progress;
import org.gphash.cli.ToolVersion;
import org.gphash.shard.ShardManifest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code recover POOL}: what the engine's open does after a crash, even on a cleanly closed pool
 * (it always scans: {@code verifyOnOpen}): clear INSERT slots, remove duplicates,
 * finish an interrupted resize, rebuild free space, repair a header copy), then a clean close, then
 * a read-only check. Recovery is idempotent and itself crash-safe, so an interrupted run is simply
 * run again. Like open, it refuses a pool with more damage than a crash leaves (items that do not
 * match their key) and changes nothing; {@code --force} clears such items instead.
 */
@Command(name = "recover", versionProvider = ToolVersion.class,
        description = {"Runs recovery on a pool (what open does) and reports the count of each repair, then checks "
                + "the result. Idempotent; safe to interrupt and run again.",
                "Exit code 0 when the recovered pool is sound, 1 when not, 2 when it cannot be opened."})
final class RecoverCommand implements Callable<Integer> {

    @Mixin
    Cli.Help help = new Cli.Help();

    @Spec
    CommandSpec spec;

    @Mixin
    Cli.PoolArgument pool = new Cli.PoolArgument();

    @Option(names = "--json", description = "print what was done as one JSON object")
    boolean json;

    @Option(names = "--force", description = "also clear damage no crash leaves (items whose key does not match their "
            + "fingerprint or bucket, more half-done operations than were in flight): those items are lost; without "
            + "it such a pool is refused and left unchanged")
    boolean force;

    @Option(names = "--journal", paramLabel = "DIR", description = "the index's journal: a pool that is missing or "
            + "older than the machine's last boot is rebuilt from its checkpoint and journal, and what was replayed is reported")
    Path journal;

    @Override
    public Integer call() {
        RecoveryReport r;
        GPHashIndex.Builder b = GPHashIndex.builder(pool.path()).verifyOnOpen(true).repairBeyondCrash(force);
        if (journal != null) {
            b.journal(journal);
        }
        try (GPHashIndex index = b.open()) {
            r = index.lastRecovery();
        }
        // A sharded index (issue 55: recover DIR recovered every shard, then failed to scan the directory):
        // each shard is checked as a pool, and the index is sound when all are.
        List<PoolReport> reports = new ArrayList<>();
        boolean sharded = ShardedDirectories.isShardedIndex(pool.path());
        if (sharded) {
            ShardManifest manifest = ShardedDirectories.manifest(pool.path());
            for (int s = 0; s < manifest.shards(); s++) {
                reports.add(PoolScanner.scan(ShardManifest.shardPath(pool.path(), s), Progress.NONE));
            }
        } else {
            reports.add(PoolScanner.scan(pool.path(), Progress.NONE));
        }
        PoolReport after = reports.stream().filter(rep -> !rep.sound()).findFirst().orElse(reports.get(0));
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("pool", pool.path().toAbsolutePath().toString());
            m.put("previousShutdownClean", r.previousShutdownClean());
            m.put("headerCopyRepaired", r.headerCopyRepaired());
            m.put("insertSlotsCleared", r.insertSlotsCleared());
            m.put("tornSlotsCleared", r.tornSlotsCleared());
            m.put("duplicatesRemoved", r.duplicatesRemoved());
            m.put("resizeResumed", r.resizeResumed());
            m.put("itemsRehashed", r.itemsRehashed());
            m.put("items", r.items());
            m.put("valueBlocksInUse", r.valueBlocksInUse());
            m.put("valueBlocksFree", r.valueBlocksFree());
            m.put("trailingBytesIgnored", r.trailingBytesIgnored());
            m.put("millis", r.duration().toMillis());
            if (journal != null) {
                m.put("journalRebuilt", r.journal().rebuilt());
                m.put("journalWhy", r.journal().why());
                m.put("checkpoint", r.journal().checkpoint());
                m.put("checkpointEntries", r.journal().checkpointEntries());
                m.put("journalRecordsReplayed", r.journal().recordsReplayed());
                m.put("journalWritesReplayed", r.journal().operationsReplayed());
                m.put("journalLastSeq", r.journal().lastSeq());
                m.put("journalCut", r.journal().cut());
            }
            m.put("soundAfter", after.sound());
            out.println(Json.write(m));
        } else {
            out.println((sharded ? "index " : "pool ") + pool.path().toAbsolutePath());
            out.println("  previous shutdown:        " + (r.previousShutdownClean() ? "clean" : "NOT clean"));
            out.println("  header copy repaired:     " + (r.headerCopyRepaired() ? "yes" : "no"));
            out.println("  INSERT slots cleared:     " + r.insertSlotsCleared());
            out.println("  torn slots cleared:       " + r.tornSlotsCleared());
            out.println("  duplicates removed:       " + r.duplicatesRemoved());
            out.println("  resize resumed:           " + (r.resizeResumed() ? "yes, " + r.itemsRehashed()
                    + " items rehashed" : "no"));
            out.println("  free space rebuilt:       " + r.valueBlocksInUse() + " value blocks in use, "
                    + r.valueBlocksFree() + " free");
            out.println("  items:                    " + r.items());
            out.println("  trailing bytes ignored:   " + r.trailingBytesIgnored());
            out.println("  took " + r.duration().toMillis() + " ms");
            if (journal != null) {
                out.println("  " + r.journal());
            }
            out.println(after.sound() ? "recover: done, " + (sharded ? "every shard" : "pool") + " is sound"
                    : "recover: done, but " + (sharded ? "a shard" : "the pool") + " is NOT sound:");
            if (!after.sound()) {
                out.print(ReportWriter.checkText(after));
            }
        }
        return after.sound() ? ToolExit.SOUND : ToolExit.UNSOUND;
    }
}
