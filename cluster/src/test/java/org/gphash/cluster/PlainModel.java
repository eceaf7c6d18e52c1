package org.gphash.cluster;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import org.gphash.OpKind;
import org.gphash.Outcome;

/** The index's contract on a plain map: what each kind of operation returns and leaves. */
final class PlainModel {

    final Map<Long, byte[]> map = new HashMap<>();

    /** The model's value of {@code key}, or null. */
    byte[] get(long key) {
        return map.get(key);
    }

    /** Applies one operation; {@return the outcome the index must give} */
    Outcome apply(OpKind kind, long key, byte[] value, byte[] expected) {
        byte[] old = map.get(key);
        return switch (kind) {
            case GET -> old != null ? Outcome.FOUND : Outcome.NOT_FOUND;
            case PUT -> {
                map.put(key, value);
                yield old == null ? Outcome.INSERTED : Outcome.UPDATED;
            }
            case INSERT -> {
                if (old == null) {
                    map.put(key, value);
                }
                yield old == null ? Outcome.INSERTED : Outcome.EXISTS;
            }
            case UPDATE -> {
                if (old != null) {
                    map.put(key, value);
                }
                yield old != null ? Outcome.UPDATED : Outcome.NOT_FOUND;
            }
            case DELETE -> {
                map.remove(key);
                yield old != null ? Outcome.DELETED : Outcome.NOT_FOUND;
            }
            case READ_MODIFY_WRITE -> {
                if (old != null) {
                    map.put(key, value);
                }
                yield old != null ? Outcome.REPLACED : Outcome.NOT_FOUND;
            }
            case COMPARE_AND_SET, COMPARE_AND_DELETE -> {
                if (old == null) {
                    yield Outcome.NOT_FOUND;
                }
                if (!Arrays.equals(old, expected)) {
                    yield Outcome.EXISTS;
                }
                if (kind == OpKind.COMPARE_AND_SET) {
                    map.put(key, value);
                    yield Outcome.UPDATED;
                }
                map.remove(key);
                yield Outcome.DELETED;
            }
        };
    }
}
