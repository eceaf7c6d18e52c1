package org.gphash.cli;

import java.nio.file.Path;
import java.util.Locale;

import picocli.CommandLine.Help.Ansi;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * picocli for the demo's, the benchmarks' and the trace tools' command lines: options are declared
 * on each command's fields; here are what they share. Whole numbers (every {@code int} and
 * {@code long} option) accept underscores and a k (10^3) or m (10^6) suffix ({@code 1_000_000},
 * {@code 500k}, {@code 2m}); a command line that cannot be run is a {@link UsageException} whose
 * message names the option and what was wrong (the commands print it and exit with status 2).
 */
public final class Cli {

    /** The most client threads any command runs. */
    public static final int MAX_THREADS = 1024;
    /** The largest batch any command builds. */
    public static final int MAX_BATCH = 1 << 20;

    /** A command line that cannot be run. */
    public static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        public UsageException(String message) {
            super(message);
        }
    }

    /**
     * The help every command offers, in one style: {@code -h}/{@code --help} and {@code -V}/{@code
     * --version} ({@code @Mixin Cli.Help help}, with {@code versionProvider = ToolVersion.class} on the
     * command). Commands run by picocli's {@code execute} have both handled for them; a command that
     * only parses asks {@link #requested()} and prints {@link Cli#usage}, which is the version when
     * that was asked for.
     */
    public static final class Help {
        @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this message")
        boolean usage;

        @Option(names = {"-V", "--version"}, versionHelp = true, description = "print the version")
        boolean version;

        /** {@return whether the command line asked for the usage message or the version} */
        public boolean requested() {
            return usage || version;
        }
    }

    /**
     * The POOL argument of the commands that take an existing index, in one wording for all of them
     * ({@code @Mixin Cli.PoolArgument pool}).
     */
    public static final class PoolArgument {
        @Parameters(index = "0", paramLabel = "POOL", description = "the pool file, or the directory of a sharded index")
        Path path;

        /** {@return the pool file or sharded index directory given} */
        public Path path() {
            return path;
        }
    }

    private Cli() {
    }

    /** Parses {@code args} into the fields of {@code command} (a picocli {@code @Command}). */
    public static <T> T parse(T command, String[] args) throws UsageException {
        try {
            commandLine(command).parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            throw new UsageException(e.getMessage());
        }
        return command;
    }

    /**
     * The usage message of {@code command}, from its annotations, without colours; its version
     * instead when its {@link Help} asked for that.
     */
    public static String usage(Object command) {
        CommandLine cl = commandLine(command);
        for (CommandLine.Model.CommandSpec mixin : cl.getCommandSpec().mixins().values()) {
            if (mixin.userObject() instanceof Help h && h.version) {
                return String.join(System.lineSeparator(), cl.getCommandSpec().version()) + System.lineSeparator();
            }
        }
        return cl.getUsageMessage(Ansi.OFF);
    }

    /**
     * What {@code -h} or {@code -V} in {@code args} asks of {@code command}: {@link #usage(Object)}
     * after parsing {@code args} into it (a command line that does not parse gives the usage message).
     */
    public static String usage(Object command, String[] args) {
        try {
            parse(command, args);
        } catch (UsageException e) {
            // the usage message, as for -h
        }
        return usage(command);
    }

    private static CommandLine commandLine(Object command) {
        ITypeConverter<Long> count = Cli::count;
        ITypeConverter<Integer> intCount = text -> Math.toIntExact(count(text));
        return new CommandLine(command)
                .setCaseInsensitiveEnumValuesAllowed(true)
                .registerConverter(Long.class, count).registerConverter(long.class, count)
                .registerConverter(Integer.class, intCount).registerConverter(int.class, intCount);
    }

    /** A whole number with optional underscores and a k (10^3) or m (10^6) suffix. */
    public static long count(String text) {
        String t = text.strip().replace("_", "").toLowerCase(Locale.ROOT);
        long scale = 1;
        if (t.endsWith("k")) {
            scale = 1_000;
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            scale = 1_000_000;
            t = t.substring(0, t.length() - 1);
        }
        try {
            return Math.multiplyExact(Long.parseLong(t), scale);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new CommandLine.TypeConversionException("a whole number (like 1_000_000, 500k or 2m), got '" + text + "'");
        }
    }

    /** {@code value} of option {@code name}, checked to lie in [min, max]. */
    public static long range(String name, long value, long min, long max) throws UsageException {
        if (value < min || value > max) {
            throw new UsageException(name + " must be " + (max >= Long.MAX_VALUE / 2 ? "at least " + min
                    : "between " + min + " and " + max) + ", got " + value);
        }
        return value;
    }

    /** {@code value} of option {@code name}, checked to lie in [0, 1]. */
    public static double proportion(String name, double value) throws UsageException {
        if (!(value >= 0 && value <= 1)) {
            throw new UsageException(name + " must be between 0 and 1, got " + value);
        }
        return value;
    }

    /** {@code value} of option {@code name}, checked to lie strictly between 0 and 1 (a zipfian constant). */
    public static double theta(String name, double value) throws UsageException {
        if (!(value > 0 && value < 1)) {
            throw new UsageException(name + " must be between 0 and 1 (exclusive), got " + value);
        }
        return value;
    }
}
