package org.gphash.recovery;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code check POOL}: verifies without writing anything; exit 0 when sound, 1 when not. */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = {"Verifies a pool without changing it: header copies and checksums, geometry and extents, "
                + "every slot state, fingerprints against keys, candidate order (duplicates, misplaced items), "
                + "value offsets inside the heap and never shared, value heap accounting.",
                "Exit code 0 when sound, 1 when not, 2 when the pool cannot be opened."})
final class CheckCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "POOL", description = "the pool file")
    Path pool;

    @Option(names = "--json", description = "print the report as one JSON object")
    boolean json;

    @Option(names = "--deep", description = "also check every item's key and value against its checksum (pools "
            + "created with item checksums)")
    boolean deep;

    @Override
    public Integer call() {
        PoolReport report = PoolScanner.scan(pool, json ? Progress.NONE : Progress.forTerminal(), deep);
        String refusal = org.gphash.persistence.PoolFile.openRefusal(pool);
        if (refusal != null) {
            report.findings().add(Problem.OPEN_REFUSES, "pool " + pool.toAbsolutePath() + ": " + refusal);
        }
        spec.commandLine().getOut().print(json ? ReportWriter.checkJson(report) + "\n" : ReportWriter.checkText(report));
        return report.cannotOpen() ? RecoveryTool.CANNOT_RUN : report.sound() ? RecoveryTool.SOUND : RecoveryTool.UNSOUND;
    }
}
