package org.gphash.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

import org.gphash.error.JournalDamagedException;
import org.gphash.error.PoolIoException;

/**
 * The journal's state file: which journal this is, the key and value size, and which pool, made
 * on which boot of the machine, the journal stands behind. An open trusts the pool only where both
 * still hold (the pool file has the identity recorded here and the machine has not booted since):
 * a pool on tmpfs is gone after a reboot, and a pool on a disk whose writes the journal made
 * unnecessary to flush holds whatever pages the kernel happened to write back. A pool identity of 0
 * says a rebuild was under way: the pool there is not to be trusted either.
 *
 * @param journalId    random, in every segment and checkpoint header: files of another journal are refused
 * @param keySize      the index's key size
 * @param valueSize    the index's value size
 * @param valueLengths whether the pool's values have any length up to the value size (a format 3 pool
 *                     on the CPU engine): a rebuild then makes a pool of format 3, whatever the builder
 *                     that opens says (0 in the file, as before this field, reads false)
 * @param poolIdentity the pool's identity (its header's), 0 while none is trusted
 * @param bootId       the machine's boot when that pool was made or last opened whole
 */
record JournalState(long journalId, int keySize, int valueSize, boolean valueLengths, long poolIdentity, String bootId) {

    private static final long MAGIC = 0x5441545348485047L;   // "GPHSTAT" + 'T'
    private static final int VERSION = 1;
    private static final int SIZE = 128;
    private static final int BOOT_AT = 40;
    private static final int BOOT_MAX = 80;

    static Path file(Path dir) {
        return dir.resolve(JournalFiles.STATE);
    }

    /** The state in {@code dir}, or null where there is none. */
    static JournalState read(Path dir) {
        Path f = file(dir);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(f);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new PoolIoException("cannot read " + f + ": " + e.getMessage(), e);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (bytes.length != SIZE || b.getLong(0) != MAGIC) {
            throw new JournalDamagedException(f, 0, "not a gphash journal state file (" + bytes.length + " bytes)");
        }
        if (b.getInt(SIZE - 4) != Crc.of(b, 0, SIZE - 4)) {
            throw new JournalDamagedException(f, 0, "state file checksum mismatch");
        }
        if (b.getInt(8) != VERSION) {
            throw new JournalDamagedException(f, 8, "unsupported journal state version " + b.getInt(8));
        }
        int bootLen = 0;
        while (bootLen < BOOT_MAX - BOOT_AT && bytes[BOOT_AT + bootLen] != 0) {
            bootLen++;
        }
        return new JournalState(b.getLong(24), b.getInt(12), b.getInt(16), b.getInt(20) == 1, b.getLong(32),
                new String(bytes, BOOT_AT, bootLen, StandardCharsets.US_ASCII));
    }

    /** Writes this state whole or not at all. */
    void write(Path dir) {
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(0, MAGIC).putInt(8, VERSION).putInt(12, keySize).putInt(16, valueSize).putInt(20, valueLengths ? 1 : 0)
                .putLong(24, journalId)
                .putLong(32, poolIdentity);
        byte[] boot = bootId.getBytes(StandardCharsets.US_ASCII);
        b.put(BOOT_AT, boot, 0, Math.min(boot.length, BOOT_MAX - BOOT_AT));
        b.putInt(SIZE - 4, Crc.of(b, 0, SIZE - 4));
        JournalFiles.writeAtomically(file(dir), b);
    }

    JournalState withPool(long identity, String boot) {
        return new JournalState(journalId, keySize, valueSize, valueLengths, identity, boot);
    }

    /**
     * This state, saying the pool's values have any length where {@code engineLengths} (the engine that
     * opened it takes them) or where it said so already: once a pool held values of any length, a
     * rebuild makes one that can (an engine of one value size over the same format 3 pool, the GPU's,
     * does not take it back).
     */
    JournalState withValueLengths(boolean engineLengths) {
        return engineLengths && !valueLengths
                ? new JournalState(journalId, keySize, valueSize, true, poolIdentity, bootId) : this;
    }

    /**
     * This boot of the machine: Linux's boot id, or {@code gphash.bootId} where set (tests simulate a
     * reboot with it), or "unknown" where neither is there (then only the pool's identity is checked).
     */
    static String currentBoot() {
        String forced = System.getProperty("gphash.bootId");
        if (forced != null) {
            return forced;
        }
        try {
            return Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }
}
