package org.gphash.recovery;

import java.io.PrintWriter;
import java.nio.file.FileSystemException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import org.gphash.cli.Cli;
import org.gphash.cli.Json;
import org.gphash.cli.ToolVersion;
import org.gphash.error.PoolFormatException;
import org.gphash.error.PoolIoException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine;

/**
 * The offline recovery tool: {@code check}, {@code recover}, {@code stats}, {@code dump},
 * {@code import}, {@code snapshot}, {@code upgrade}. Exit codes: 0 success (a sound pool for check), 1 the pool is
 * not sound or the operation failed on the pool's contents, 2 bad usage or a pool that cannot be
 * opened (no such file, locked by another process).
 */
@Command(name = "gphash", versionProvider = ToolVersion.class, 
        description = "Offline tools for gphash pool files.",
        subcommands = {CheckCommand.class, RecoverCommand.class, StatsCommand.class, DumpCommand.class,
                ImportCommand.class, SnapshotCommand.class, UpgradeCommand.class})
public final class RecoveryTool implements Runnable {

    @Mixin
    Cli.Help help = new Cli.Help();

    /** Exit codes ({@link ToolExit}): a sound pool, a pool that is not (or a failure on its contents), a pool that cannot be opened. */
    public static final int SOUND = ToolExit.SOUND;
    public static final int UNSOUND = ToolExit.UNSOUND;
    public static final int CANNOT_RUN = ToolExit.CANNOT_RUN;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required");
    }

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the tool with the given streams and returns its exit code (tests call this). */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new RecoveryTool());
        cl.setOut(out);
        cl.setErr(err);
        // With --json every outcome is one JSON object on stdout, errors included (issue 28).
        boolean json = Arrays.asList(args).contains("--json");
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            // A pool that cannot be opened at all (missing, locked, unreadable, not a pool), or a file the
            // command cannot reach, is not a verdict on it: 2, as check says for each (issue 55).
            int code = e instanceof ToolExit.Failure t ? t.code
                    : e instanceof PoolIoException || e instanceof FileSystemException || notAPool(e)
                    ? CANNOT_RUN : UNSOUND;
            if (json) {
                printJsonError(commandLine, ToolExit.describe(e), code);
            } else {
                commandLine.getErr().println("gphash " + commandLine.getCommandName() + ": " + ToolExit.describe(e));
                commandLine.getErr().flush();
            }
            return code;
        });
        if (json) {
            cl.setParameterExceptionHandler((e, a) -> {
                printJsonError(e.getCommandLine(), e.getMessage(), CANNOT_RUN);
                return CANNOT_RUN;
            });
        }
        int code = cl.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    private static void printJsonError(CommandLine commandLine, String message, int code) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("command", commandLine.getCommandName());
        m.put("error", message);
        m.put("exit", code);
        commandLine.getOut().println(Json.write(m));
        commandLine.getOut().flush();
    }

    private static boolean notAPool(Exception e) {
        return e instanceof PoolFormatException f
                && (f.reason() == PoolFormatException.Reason.NOT_A_POOL
                || f.reason() == PoolFormatException.Reason.WRONG_VERSION);
    }
}
