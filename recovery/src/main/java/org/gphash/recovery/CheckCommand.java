package org.gphash.recovery;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import org.gphash.cli.Cli;
import org.gphash.cli.Json;
import org.gphash.cli.Progress;
import org.gphash.cli.ToolVersion;
import org.gphash.journal.JournalCheck;
import org.gphash.persistence.PathRefusals;
import org.gphash.shard.ShardManifest;
import org.gphash.shard.ShardedIndexes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code check POOL}: verifies without writing anything; exit 0 when sound, 1 when not. */
@Command(name = "check", versionProvider = ToolVersion.class,
        description = {"Verifies a pool without changing it: header copies and checksums, geometry and extents, "
                + "every slot state, fingerprints against keys, candidate order (duplicates, misplaced items), "
                + "value offsets inside the heap and never shared, value heap accounting.",
                "A sharded index: its manifest and every shard pool.",
                "Exit code 0 when sound, 1 when not, 2 when the pool cannot be opened."})
final class CheckCommand implements Callable<Integer> {

    @Mixin
    Cli.Help help = new Cli.Help();

    @Spec
    CommandSpec spec;

    @Mixin
    Cli.PoolArgument pool = new Cli.PoolArgument();

    @Option(names = "--json", description = "print the report as one JSON object")
    boolean json;

    @Option(names = "--deep", description = "also check every item's key and value against its checksum (pools "
            + "created with item checksums)")
    boolean deep;

    @Option(names = "--journal", paramLabel = "DIR", description = "also verify the index's journal in DIR: every "
            + "record of every segment and every chunk of the newest checkpoint; a missing pool is then not an error "
            + "(an open rebuilds it)")
    Path journal;

    @Override
    public Integer call() {
        if (journal != null) {
            return checkJournaled();
        }
        if (Files.isDirectory(pool.path(), LinkOption.NOFOLLOW_LINKS)) {  // a sharded index, or what is left of one
            return checkShardedIndex();
        }
        PoolReport report = checkPool(pool.path());
        spec.commandLine().getOut().print(json ? ReportWriter.checkJson(report) + "\n" : ReportWriter.checkText(report));
        return report.cannotOpen() ? ToolExit.CANNOT_RUN : report.sound() ? ToolExit.SOUND : ToolExit.UNSOUND;
    }

    /**
     * A sharded index (a directory with a manifest, issue 30): the manifest, then each shard pool as
     * a pool of its own and against the manifest. Exit 2 when the manifest cannot be read or a shard
     * cannot be opened, 1 when any shard is unsound or disagrees, 0 when all are sound.
     */
    private int checkShardedIndex() {
        PrintWriter out = spec.commandLine().getOut();
        ShardManifest manifest;
        try {
            manifest = ShardManifest.read(pool.path());
        } catch (RuntimeException e) {
            out.print(json ? Json.write(Map.of("index", pool.path().toString(), "sound", false, "error", e.getMessage())) + "\n"
                    : "index " + pool.path() + "\n  " + e.getMessage() + "\ncheck: cannot read the sharded index's manifest\n");
            return ToolExit.CANNOT_RUN;
        }
        boolean sound = true;
        boolean cannotOpen = false;
        List<String> reports = new ArrayList<>();
        StringBuilder text = new StringBuilder("index " + pool.path() + ": " + manifest.shards() + " shards, " + manifest.geometry() + "\n");
        for (int s = 0; s < manifest.shards(); s++) {
            Path shard = ShardManifest.shardPath(pool.path(), s);
            if (!Files.exists(shard, LinkOption.NOFOLLOW_LINKS)) {
                sound = false;
                cannotOpen = true;
                String why = "shard " + s + " (" + shard.getFileName() + ") is missing";
                reports.add(Json.write(Map.of("pool", shard.toString(), "sound", false, "error", why)));
                text.append("pool ").append(shard).append("\n  ").append(why).append("\ncheck: missing\n");
                continue;
            }
            PoolReport report = checkPool(shard);
            if (!report.cannotOpen()) {
                try {
                    ShardedIndexes.checkShard(pool.path(), manifest, s);
                    long misplaced = ShardedIndexes.misplacedItems(pool.path(), manifest, s);
                    if (misplaced > 0) {
                        report.findings().add(Problem.SHARD_DISAGREES, misplaced + " items of shard " + s + " belong to "
                                + "another shard under the manifest's shard function: the index cannot reach them");
                    }
                } catch (RuntimeException e) {
                    report.findings().add(Problem.SHARD_DISAGREES, e.getMessage());
                }
            }
            sound &= report.sound();
            cannotOpen |= report.cannotOpen();
            reports.add(ReportWriter.checkJson(report));
            text.append(ReportWriter.checkText(report));
        }
        if (json) {
            out.print("{\"index\":" + Json.write(pool.path().toString()) + ",\"shards\":" + manifest.shards() + ",\"sound\":" + sound
                    + ",\"pools\":[" + String.join(",", reports) + "]}\n");
        } else {
            out.print(text.append("index check: ").append(sound ? "sound" : "NOT sound").append(" (").append(manifest.shards())
                    .append(" shards)\n"));
        }
        return cannotOpen ? ToolExit.CANNOT_RUN : sound ? ToolExit.SOUND : ToolExit.UNSOUND;
    }

    /**
     * A journaled index: the journal (and checkpoint), then the pool where it is there. Exit 1 when
     * either is damaged, 0 when both are sound or the pool is missing (an open rebuilds it).
     */
    private int checkJournaled() {
        PrintWriter out = spec.commandLine().getOut();
        JournalCheck.Report j = JournalCheck.check(journal, pool.path());
        boolean poolThere = Files.exists(pool.path(), LinkOption.NOFOLLOW_LINKS);
        PoolReport report = poolThere ? checkPool(pool.path()) : null;
        boolean sound = j.sound() && (report == null || report.sound());
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("journal", journal.toString());
            m.put("sound", sound);
            m.put("journalSound", j.sound());
            m.put("segments", j.segments());
            m.put("records", j.records());
            m.put("lastSeq", j.lastSeq());
            m.put("tornLastRecord", j.tornTail());
            m.put("checkpoint", j.checkpoint());
            m.put("checkpointSeq", j.checkpointSeq());
            m.put("checkpointEntries", j.checkpointEntries());
            m.put("pool", j.poolVerdict());
            m.put("damage", j.damage());
            out.print(Json.write(m).replaceFirst("}$", "") + ",\"poolReport\":" + (report == null ? "null" : ReportWriter.checkJson(report)) + "}\n");
        } else {
            out.println("journal " + journal.toAbsolutePath());
            j.lines().forEach(l -> out.println("  " + l));
            out.println("journal check: " + (j.sound() ? "sound" : "NOT sound"));
            if (report != null) {
                out.print(ReportWriter.checkText(report));
            }
        }
        return sound ? ToolExit.SOUND : ToolExit.UNSOUND;
    }

    private PoolReport checkPool(Path pool) {
        PoolReport report = PoolScanner.scan(pool, json ? Progress.NONE : Progress.forTerminal(), deep);
        String refusal = PathRefusals.ofPoolFile(pool);
        if (refusal != null) {
            report.findings().add(Problem.OPEN_REFUSES, "pool " + pool.toAbsolutePath() + ": " + refusal);
        }
        return report;
    }
}
