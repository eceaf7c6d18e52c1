package org.gphash.recovery;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

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

/** {@code stats POOL}: size, load factor per level, bucket occupancy, value heap use. Read-only. */
@Command(name = "stats", versionProvider = ToolVersion.class,
        description = "Prints a pool's size, load factor per level, bucket occupancy histogram and value heap use, "
                + "without changing it; for a sharded index, every shard's and the index's total.")
final class StatsCommand implements Callable<Integer> {

    @Mixin
    Cli.Help help = new Cli.Help();

    @Spec
    CommandSpec spec;

    @Mixin
    Cli.PoolArgument pool = new Cli.PoolArgument();

    @Option(names = "--json", description = "print the figures as one JSON object")
    boolean json;

    @Override
    public Integer call() {
        if (ShardedDirectories.isShardedIndex(pool.path())) {
            return shardedStats();
        }
        PoolReport report = PoolScanner.scan(pool.path(), json ? Progress.NONE : Progress.forTerminal());
        if (report.header() == null) {
            // The words and the exit status check gives the same file (issue 55).
            throw new ToolExit.Failure("pool " + pool.path().toAbsolutePath() + ": " + ReportWriter.advice(report)
                    + " (" + String.join("; ", report.findings().kinds().stream().flatMap(k -> report.findings()
                    .examples(k).stream()).toList()) + ")", ToolExit.CANNOT_RUN);
        }
        spec.commandLine().getOut().print(json ? ReportWriter.statsJson(report) + "\n" : ReportWriter.statsText(report));
        return ToolExit.SOUND;
    }

    /** A sharded index: every shard's figures, as for a pool, and the index's item count. */
    private int shardedStats() {
        ShardManifest manifest = ShardedDirectories.manifest(pool.path());
        List<String> jsons = new ArrayList<>();
        StringBuilder text = new StringBuilder("index " + pool.path().toAbsolutePath() + ": " + manifest.shards() + " shards, "
                + manifest.geometry() + "\n");
        long items = 0;
        for (int s = 0; s < manifest.shards(); s++) {
            Path shard = ShardManifest.shardPath(pool.path(), s);
            PoolReport report = PoolScanner.scan(shard, Progress.NONE);
            if (report.header() == null) {
                throw new ToolExit.Failure("shard " + s + " (" + shard + ") has no usable header: "
                        + report.findings().examples(Problem.UNREADABLE_HEADER));
            }
            items += report.items();
            jsons.add(ReportWriter.statsJson(report));
            text.append(ReportWriter.statsText(report));
        }
        spec.commandLine().getOut().print(json ? "{\"index\":" + Json.write(pool.path().toAbsolutePath().toString()) + ",\"shards\":"
                + manifest.shards() + ",\"items\":" + items + ",\"pools\":[" + String.join(",", jsons) + "]}\n"
                : text.append("index: ").append(items).append(" items in ").append(manifest.shards()).append(" shards\n"));
        return ToolExit.SOUND;
    }
}
