package org.gphash.cli;

import picocli.CommandLine;

/**
 * What {@code -V} prints for every gphash tool and subcommand (issue 55: {@code check -V} and
 * {@code crashtest -V} printed nothing, their help lists the option): the build's version, from the
 * jar's manifest where it has one.
 */
public final class ToolVersion implements CommandLine.IVersionProvider {

    /** For picocli. */
    public ToolVersion() {
    }

    @Override
    public String[] getVersion() {
        String v = ToolVersion.class.getPackage().getImplementationVersion();
        return new String[] {"gphash " + (v != null ? v : "(version unknown: not run from a built jar)")
                + ", Java " + Runtime.version()};
    }
}
