package org.gphash.crashtest;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The persist call sites the power-fail driver aims at name methods that exist: a site renamed
 * away by a refactoring would never fire, and its rounds would quietly test nothing special.
 */
class DriverSitesTest {

    @Test
    void everySiteNamesAnEngineMethod() {
        for (String site : Stream.concat(Stream.concat(Driver.RESIZE_SITES.stream(), Driver.OTHER_SITES.stream()), Stream.of(Driver.REPAIR_SITE)).toList()) {
            int dot = site.indexOf('.');
            String simple = site.substring(0, dot);
            Class<?> c = null;
            for (String p : ShadowPersistence.ENGINE_PACKAGES) {
                try {
                    c = Class.forName(p + simple);
                } catch (ClassNotFoundException e) {
                    // in another of the engine's packages
                }
            }
            assertTrue(c != null, site + ": no such class in " + ShadowPersistence.ENGINE_PACKAGES);
            String method = site.substring(dot + 1);
            assertTrue(Arrays.stream(c.getDeclaredMethods()).anyMatch(m -> m.getName().equals(method)),
                    site + ": no such method in " + c.getName());
        }
    }
}
