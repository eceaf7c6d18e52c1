package org.gphash.recovery;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code stats POOL}: size, load factor per level, bucket occupancy, value heap use. Read-only. */
@Command(name = "stats", mixinStandardHelpOptions = true,
        description = "Prints a pool's size, load factor per level, bucket occupancy histogram and value heap use, "
                + "without changing it.")
final class StatsCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "POOL", description = "the pool file")
    Path pool;

    @Option(names = "--json", description = "print the figures as one JSON object")
    boolean json;

    @Override
    public Integer call() {
        PoolReport report = PoolScanner.scan(pool, json ? Progress.NONE : Progress.forTerminal());
        if (report.header() == null) {
            throw new RecoveryTool.ToolException("pool " + pool.toAbsolutePath() + " has no usable header: "
                    + report.findings().examples(Problem.UNREADABLE_HEADER));
        }
        spec.commandLine().getOut().print(json ? ReportWriter.statsJson(report) + "\n" : ReportWriter.statsText(report));
        return RecoveryTool.SOUND;
    }
}
