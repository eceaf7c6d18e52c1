package org.gphash.crashtest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A small shared-memory file where the worker says what it is doing, so that after a SIGKILL the
 * driver knows where the kill landed (opening and recovering, in a resize, in value reclamation, at
 * which persist point). Stores are volatile stores into a shared mapping: they are in the page
 * cache the moment they are made, and the page cache outlives the killed process.
 */
final class PhaseBoard {

    static final int STARTING = 0;
    static final int OPENING = 1;
    static final int RUNNING = 2;
    static final int PARKED = 3;
    /** Inside {@code close()}, after the round's operations. */
    static final int CLOSING = 4;

    private static final int BYTES = 64;
    private static final int OFF_STATE = 0;
    private static final int OFF_POINT = 4;
    private static final int OFF_RESIZE = 8;
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final MemorySegment board;

    private PhaseBoard(MemorySegment board) {
        this.board = board;
    }

    /** The worker's side: maps (and zeroes) the board file. */
    static PhaseBoard open(Path path) {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ch.truncate(0);
            ch.write(ByteBuffer.allocate(BYTES), 0);
            return new PhaseBoard(ch.map(FileChannel.MapMode.READ_WRITE, 0, BYTES, Arena.ofAuto()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map phase board " + path, e);
        }
    }

    void state(int s) {
        INT.setVolatile(board, (long) OFF_STATE, s);
    }

    /** The last crash point reached (ordinal + 1), or 0 between operations. */
    void point(int ordinalPlusOne) {
        INT.setVolatile(board, (long) OFF_POINT, ordinalPlusOne);
    }

    void inResize(boolean on) {
        INT.setVolatile(board, (long) OFF_RESIZE, on ? 1 : 0);
    }

    int state() {
        return (int) INT.getVolatile(board, (long) OFF_STATE);
    }

    /** What the board said when the worker died, read by the driver. */
    record Snapshot(int state, int point, boolean inResize) {
    }

    static Snapshot read(Path path) {
        try {
            if (!Files.exists(path) || Files.size(path) < BYTES) {
                return new Snapshot(STARTING, 0, false);
            }
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(path)).order(ByteOrder.nativeOrder());
            return new Snapshot(b.getInt(OFF_STATE), b.getInt(OFF_POINT), b.getInt(OFF_RESIZE) != 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
