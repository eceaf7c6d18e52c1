/**
 * The offline recovery tool ({@code check}, {@code recover}, {@code stats}, {@code dump}, {@code import}, {@code snapshot} subcommands) that verifies and repairs pools after a crash.
 */
package org.gphash.recovery;
