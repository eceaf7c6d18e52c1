package org.gphash.recovery;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import org.gphash.cli.Cli;
import org.gphash.cli.Json;
import org.gphash.cli.ToolVersion;
import org.gphash.error.GPHashException;
import org.gphash.error.PoolFormatException;
import org.gphash.error.PoolIoException;
import org.gphash.error.PoolLockedException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine;

/**
 * The offline recovery tool: {@code check}, {@code recover}, {@code stats}, {@code dump},
 * {@code import}, {@code snapshot}. Exit codes: 0 success (a sound pool for check), 1 the pool is
 * not sound or the operation failed on the pool's contents, 2 bad usage or a pool that cannot be
 * opened (no such file, locked by another process).
 */
@Command(name = "gphash", versionProvider = ToolVersion.class, 
        description = "Offline tools for gphash pool files.",
        subcommands = {CheckCommand.class, RecoverCommand.class, StatsCommand.class, DumpCommand.class,
                ImportCommand.class, SnapshotCommand.class})
public final class RecoveryTool implements Runnable {

    @Mixin
    Cli.Help help = new Cli.Help();

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
        // With --json every outcome is one JSON object on stdout, errors included (issue 28).
        boolean json = Arrays.asList(args).contains("--json");
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            // A pool that cannot be opened at all (missing, locked, unreadable, not a pool), or a file the
            // command cannot reach, is not a verdict on it: 2, as check says for each (issue 55).
            int code = e instanceof ToolException t ? t.code
                    : e instanceof PoolIoException || e instanceof FileSystemException || notAPool(e)
                    ? CANNOT_RUN : UNSOUND;
            if (json) {
                printJsonError(commandLine, describe(e), code);
            } else {
                commandLine.getErr().println("gphash " + commandLine.getCommandName() + ": " + describe(e));
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

    /** The message a person reads: the exception's own words, never a JDK class name (issue 55). */
    static String describe(Throwable e) {
        if (e instanceof PoolLockedException) {
            return e.getMessage() + " (close the program that has it open, then try again)";
        }
        if (e instanceof UncheckedIOException u && u.getCause() != null) {
            return describe(u.getCause());
        }
        if (e instanceof NoSuchFileException f) {
            return "no such file or directory: " + f.getFile();
        }
        if (e instanceof AccessDeniedException f) {
            return "permission denied: " + f.getFile();
        }
        if (e instanceof FileAlreadyExistsException f) {
            return f.getFile() + " already exists";
        }
        if (e instanceof FileSystemException f) {
            return (f.getReason() != null ? f.getReason() : "cannot use it") + ": " + f.getFile();
        }
        if (e.getMessage() != null && (e instanceof GPHashException || e instanceof PoolIoException
                || e instanceof ToolException || e instanceof IOException)) {
            return e.getMessage();
        }
        return e.toString();
    }

    /** A failure the tool explains in its message; exit code 1 unless it says otherwise. */
    static final class ToolException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int code;

        ToolException(String message) {
            this(message, UNSOUND);
        }

        ToolException(String message, int code) {
            super(message);
            this.code = code;
        }

        ToolException(String message, Throwable cause) {
            super(message, cause);
            this.code = cause instanceof FileSystemException ? CANNOT_RUN : UNSOUND;
        }
    }
}
