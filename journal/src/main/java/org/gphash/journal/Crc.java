package org.gphash.journal;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/** CRC-32C (Castagnoli, an intrinsic on x86 and Arm) over buffers, the checksum of every journal structure. */
final class Crc {
    private Crc() {
    }

    /** The checksum of {@code buf}'s bytes from {@code from} to {@code to}, its position and limit untouched. */
    static int of(ByteBuffer buf, int from, int to) {
        CRC32C crc = new CRC32C();
        crc.update(buf.duplicate().limit(to).position(from));
        return (int) crc.getValue();
    }
}
