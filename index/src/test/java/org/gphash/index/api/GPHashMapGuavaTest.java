package org.gphash.index.api;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;

import com.google.common.collect.testing.ConcurrentMapTestSuiteBuilder;
import com.google.common.collect.testing.SampleElements;
import com.google.common.collect.testing.TestMapGenerator;
import com.google.common.collect.testing.features.CollectionFeature;
import com.google.common.collect.testing.features.CollectionSize;
import com.google.common.collect.testing.features.MapFeature;
import junit.framework.Test;
import junit.framework.TestCase;
import org.gphash.Codec;
import org.gphash.GPHashIndex;
import org.gphash.GPHashMap;

/**
 * Guava's {@code ConcurrentMap} conformance suite on {@link GPHashMap}{@code <Long, Long>}, with the
 * features Guava tests {@code ConcurrentHashMap} with (issue 28): general purpose, any size, iterator
 * removal; no nulls. Each map is a fresh pool; the few most recent stay open, older ones are closed.
 */
public final class GPHashMapGuavaTest extends TestCase {

    public static Test suite() {
        return ConcurrentMapTestSuiteBuilder.using(new Generator())
                .named("GPHashMap<Long, Long>")
                .withFeatures(MapFeature.GENERAL_PURPOSE, CollectionFeature.SUPPORTS_ITERATOR_REMOVE, CollectionSize.ANY)
                .createTestSuite();
    }

    /** Maps over fresh pools. */
    static final class Generator implements TestMapGenerator<Long, Long> {
        private static final int OPEN = 4;
        private static final TestPools POOLS = TestPools.create();
        private static final Deque<GPHashIndex> RECENT = new ArrayDeque<>();
        private static int made;

        static {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                synchronized (RECENT) {
                    RECENT.forEach(GPHashIndex::close);
                    RECENT.clear();
                }
                POOLS.close();
            }));
        }

        @Override
        public SampleElements<Map.Entry<Long, Long>> samples() {
            return new SampleElements<>(Map.entry(1L, 10L), Map.entry(2L, 20L), Map.entry(3L, 30L), Map.entry(4L, 40L),
                    Map.entry(5L, 50L));
        }

        @Override
        public Map<Long, Long> create(Object... entries) {
            GPHashIndex index;
            synchronized (RECENT) {
                if (RECENT.size() == OPEN) {
                    RECENT.removeFirst().close();
                }
                Path p = POOLS.pool("guava-" + made++ + ".pool");
                index = GPHashIndex.builder(p).keySize(8).valueSize(8).initialCapacity(64).create();
                RECENT.addLast(index);
            }
            Map<Long, Long> map = GPHashMap.of(index, Codec.longs(), Codec.longs());
            for (Object o : entries) {
                @SuppressWarnings("unchecked")
                Map.Entry<Long, Long> e = (Map.Entry<Long, Long>) o;
                map.put(e.getKey(), e.getValue());
            }
            return map;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Map.Entry<Long, Long>[] createArray(int length) {
            return new Map.Entry[length];
        }

        @Override
        public Iterable<Map.Entry<Long, Long>> order(List<Map.Entry<Long, Long>> insertionOrder) {
            return insertionOrder;
        }

        @Override
        public Long[] createKeyArray(int length) {
            return new Long[length];
        }

        @Override
        public Long[] createValueArray(int length) {
            return new Long[length];
        }
    }
}
