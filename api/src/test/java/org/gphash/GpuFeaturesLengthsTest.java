package org.gphash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

import org.junit.jupiter.api.Test;

/**
 * A GPU view that takes values of the value size only (a sharded index's) refuses a device batch with
 * lengths before it runs anything, and passes one without lengths on as the plain batch it is.
 */
class GpuFeaturesLengthsTest {

    @Test
    void aViewWithoutLengthsRefusesThemAndRunsThePlainBatch() {
        long[][] ran = new long[1][];
        InvocationHandler h = (proxy, method, args) -> {
            if (method.isDefault()) {
                return InvocationHandler.invokeDefault(proxy, method, args);
            }
            if (method.getName().equals("executeOnDevice") && args.length == 6) {
                ran[0] = new long[] {(long) args[0], (long) args[1], (long) args[2], (long) args[3], (long) args[4],
                        (long) args[5]};
                return null;
            }
            throw new AssertionError("unexpected call: " + describe(method));
        };
        GpuFeatures gpu = (GpuFeatures) Proxy.newProxyInstance(GpuFeatures.class.getClassLoader(),
                new Class<?>[] {GpuFeatures.class}, h);
        assertThrows(IllegalStateException.class, () -> gpu.executeOnDevice(4, 1, 2, 3, 9, 5, 6, 0));
        assertThrows(IllegalStateException.class, () -> gpu.executeOnDevice(4, 1, 2, 3, 0, 5, 6, 9));
        assertNull(ran[0], "nothing ran");
        gpu.executeOnDevice(4, 1, 2, 3, 0, 5, 6, 0);
        assertArrayEquals(new long[] {4, 1, 2, 3, 5, 6}, ran[0]);
    }

    private static String describe(Method m) {
        return m.getName() + "/" + m.getParameterCount();
    }
}
