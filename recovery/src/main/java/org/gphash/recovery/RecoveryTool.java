package org.gphash.recovery;

import java.io.PrintWriter;

import org.gphash.error.GPHashException;
import org.gphash.error.PoolIoException;
import org.gphash.error.PoolLockedException;
import picocli.CommandLine.Command;
import picocli.CommandLine;

/**
 * The offline recovery tool: {@code check}, {@code recover}, {@code stats}, {@code dump},
 * {@code import}, {@code snapshot}. Exit codes: 0 success (a sound pool for check), 1 the pool is
 * not sound or the operation failed on the pool's contents, 2 bad usage or a pool that cannot be
 * opened (no such file, locked by another process).
 */
@Command(name = "gphash", mixinStandardHelpOptions = true, version = "gphash recovery tool 0.1",
        description = "Offline tools for gphash pool files.",
        subcommands = {CheckCommand.class, RecoverCommand.class, StatsCommand.class, DumpCommand.class,
                ImportCommand.class, SnapshotCommand.class})
public final class RecoveryTool implements Runnable {

    public static final int SOUND = 0;
    public static final int UNSOUND = 1;
    public static final int CANNOT_RUN = 2;

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
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println("gphash " + commandLine.getCommandName() + ": " + describe(e));
            commandLine.getErr().flush();
            // A pool that cannot be opened at all (missing, locked, unreadable) is not a verdict on it.
            return e instanceof PoolIoException ? CANNOT_RUN : UNSOUND;
        });
        int code = cl.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    private static String describe(Exception e) {
        if (e instanceof PoolLockedException) {
            return e.getMessage() + " (close the program that has it open, then try again)";
        }
        if (e instanceof GPHashException || e instanceof PoolIoException || e instanceof ToolException) {
            return e.getMessage();
        }
        return e.toString();
    }

    /** A failure the tool explains in its message; exit code 1. */
    static final class ToolException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ToolException(String message) {
            super(message);
        }

        ToolException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
