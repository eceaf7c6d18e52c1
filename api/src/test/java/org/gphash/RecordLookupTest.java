package org.gphash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.invoke.MethodHandles;

import org.junit.jupiter.api.Test;

/**
 * Issue 28: a record declared as the README (now docs/USAGE.md) showed it (not public, nested in the application's
 * class) failed with a message naming lookup internals. A lookup passed in reaches it; without one
 * the error is one line naming the record and the way out.
 */
class RecordLookupTest {

    private record Point(double x, double y) {
    }

    @Test
    void aPrivateRecordWorksWithTheCallersLookup() {
        Codec<Point> c = Codec.record(MethodHandles.lookup(), Point.class);
        assertEquals(16, c.size());
        Point p = new Point(1.5, -2);
        assertEquals(p, c.decode(c.encode(p), 0));
    }

    @Test
    void withoutALookupTheErrorIsOneLineNamingTheRecord() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Codec.record(Point.class));
        assertTrue(e.getMessage().contains(Point.class.getName()) && e.getMessage().contains("MethodHandles.lookup()"),
                e.getMessage());
        assertFalse(e.getMessage().contains("\n") || e.getMessage().contains("[Ljava"), e.getMessage());
    }
}
