package org.gphash.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.SplittableRandom;

import org.gphash.Backend;
import org.gphash.Batch;
import org.gphash.BatchResult;
import org.gphash.Durability;
import org.gphash.GPHashConfig;
import org.gphash.Geometry;
import org.gphash.IndexMirror;
import org.gphash.OpKind;
import org.gphash.PersistenceMode;
import org.gphash.bktcache.BktCacheConfig;
import org.gphash.format.PoolHeader;
import org.gphash.format.SlotMeta;
import org.gphash.index.api.TestPools;
import org.gphash.persistence.PersistRanges;
import org.gphash.persistence.Persister;
import org.gphash.persistence.PoolFile;
import org.gphash.spi.CrashHook;
import org.gphash.table.Slots;
import org.gphash.table.TableLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The durability modes against a medium that writes back whenever it likes: at every persist
 * call, and after every batch, every stored-but-not-yet-persisted meta word is imagined written back
 * alone. It must then still describe a whole item: its key and its value as durable as itself
 * (else a power cut could leave a published item with a stale key or value). And every item a
 * durable meta word names must keep its value (a block reused before the meta word that unlinked it
 * was durable would change the value under it). PER_BATCH and PER_OPERATION must never break either
 * rule; ON_CLOSE_OR_SYNC does, which is what its documentation says (and shows that this test can fail).
 */
class EarlyWritebackTest {

    private static final int VALUE = 32;

    private final TestPools pools = TestPools.create();

    @AfterEach
    void cleanUp() {
        pools.close();
    }

    /** Keeps the durable image (persisted ranges only) and judges the early-writeback rules against it. */
    static final class Watch {
        final Path path;
        MemorySegment shadow;
        MemorySegment mapping;
        CpuTable table;
        long checks;
        long violations;
        String first;
        /** Slots left claimed (INSERT) after the last batch: a claim not given back is lost until the next open. */
        long claimedLeft;

        /** The medium's untearable unit: what one write-back carries whole (the persister is told so). */
        final int unit;

        Watch(Path path, int unit) {
            this.path = path;
            this.unit = unit;
        }

        Persister decorate(MemorySegment newMapping, Persister chosen) {
            MemorySegment grown = Arena.ofAuto().allocate(newMapping.byteSize(), 64);
            long kept = shadow == null ? 0 : Math.min(shadow.byteSize(), newMapping.byteSize());
            if (kept > 0) {
                MemorySegment.copy(shadow, 0, grown, 0, kept);
            }
            MemorySegment.copy(newMapping, kept, grown, kept, newMapping.byteSize() - kept);
            shadow = grown;
            mapping = newMapping;
            return new Persister() {
                @Override
                public void persist(MemorySegment m, long offset, long length) {
                    check();
                    MemorySegment.copy(m, offset, shadow, offset, Math.min(length, shadow.byteSize() - offset));
                    chosen.persist(m, offset, length);
                }

                @Override
                public void persistAll(MemorySegment m, PersistRanges ranges) {
                    check();
                    for (int i = 0; i < ranges.size(); i++) {
                        MemorySegment.copy(m, ranges.offset(i), shadow, ranges.offset(i), ranges.length(i));
                    }
                    chosen.persistAll(m, ranges);
                }

                @Override
                public int atomicWriteUnit() {
                    return unit;
                }

                @Override
                public PersistenceMode mode() {
                    return chosen.mode();
                }
            };
        }

        synchronized void check() {
            if (table == null) {
                return;  // create and recovery: no operation has run
            }
            checks++;
            TableLayout t = table.layout();
            Geometry g = table.table.geometry;
            for (int d = 0; d < t.levelCount(); d++) {
                long level = t.levelOffset(d);
                long slots = t.bucketsAtDepth(d) * g.slotsPerBucket();
                for (long s = 0; s < slots; s++) {
                    long slot = level + s * g.slotSize();
                    if (slot + g.slotSize() > shadow.byteSize()) {
                        break;
                    }
                    long now = Slots.getMeta(mapping, slot);
                    long durable = shadow.get(PoolHeader.LONG, slot);
                    if (now != durable && SlotMeta.isItem(now)) {
                        // Written back alone now: its key and value must be durable already.
                        // A write-back carries the meta word's whole unit (a key inside it goes along).
                        long v = SlotMeta.valueOffset(now);
                        long keyAt = slot + SlotMeta.BYTES;
                        boolean keyAlong = (keyAt + g.keySize() - 1) / unit == slot / unit;
                        if (!keyAlong && differs(keyAt, g.keySize())) {
                            violation("meta word at " + slot + " stored before its key was durable");
                        } else if (differs(v, g.valueSize())) {
                            violation("meta word at " + slot + " stored before its value at " + v + " was durable ("
                                    + new Throwable().getStackTrace()[3] + ")");
                        }
                    }
                    if (SlotMeta.isItem(durable) && durable != now) {
                        // The durable item must keep its value until its unlinking is durable.
                        long v = SlotMeta.valueOffset(durable);
                        if (v + g.valueSize() <= mapping.byteSize() && differs(v, g.valueSize())) {
                            violation("value block at " + v + " reused while a durable meta word at " + slot
                                    + " still names it");
                        }
                    }
                }
            }
        }

        private boolean differs(long offset, long length) {
            return MemorySegment.mismatch(mapping, offset, offset + length, shadow, offset, offset + length) >= 0;
        }

        private void violation(String what) {
            if (violations++ == 0) {
                first = what;
            }
        }
    }

    private static Watch watch;

    static {
        PoolFile.decoratePersisters((path, mapping, chosen) -> {
            Watch w = watch;
            return w != null && w.path.equals(path) ? w.decorate(mapping, chosen) : chosen;
        });
    }

    private Watch run(String name, Durability durability, boolean checkAfterBatches) {
        return run(name, durability, checkAfterBatches, 512, 64);
    }

    private Watch run(String name, Durability durability, boolean checkAfterBatches, int unit, long capacity) {
        Path path = pools.pool(name);
        Watch w = new Watch(path, unit);
        watch = w;
        GPHashConfig config = new GPHashConfig(path, 8, VALUE, 0, 0, 0, capacity, Long.MAX_VALUE, Backend.CPU, false,
                OptionalLong.of(5), CrashHook.NONE, BktCacheConfig.DISABLED, IndexMirror.AUTO, false, false, false, 0,
                false, durability, org.gphash.Coalescing.AUTO, org.gphash.GpuTuning.DEFAULTS, org.gphash.Placement.SINGLE_POOL, null);
        SplittableRandom r = new SplittableRandom(42);
        try (CpuEngine engine = CpuEngine.create(config)) {
            w.table = engine.table();
            Batch batch = Batch.create(8, VALUE, 256);
            BatchResult result = new BatchResult(VALUE, 256);
            byte[] key = new byte[8];
            byte[] value = new byte[VALUE];
            for (int b = 0; b < 40; b++) {
                batch.clear();
                for (int i = 0; i < 256; i++) {
                    long k = r.nextLong(600);
                    for (int j = 0; j < 8; j++) {
                        key[j] = (byte) (k >>> (8 * j));
                    }
                    r.nextBytes(value);
                    OpKind kind = switch (r.nextInt(6)) {
                        case 0 -> OpKind.INSERT;
                        case 1, 2 -> OpKind.PUT;
                        case 3 -> OpKind.UPDATE;
                        case 4 -> OpKind.DELETE;
                        default -> OpKind.GET;
                    };
                    batch.add(kind, key, kind == OpKind.GET || kind == OpKind.DELETE ? null : value);
                }
                engine.execute(batch, result);
                if (checkAfterBatches) {
                    w.check();
                }
            }
            w.claimedLeft = engine.verify().insertSlots();
            w.table = null;
        } finally {
            watch = null;
        }
        return w;
    }

    @Test
    void perBatchNeverPublishesAheadOfItsData() {
        Watch w = run("batch.pool", Durability.PER_BATCH, false);
        assertTrue(w.checks > 40, "checked at " + w.checks + " persist calls");
        assertEquals(0, w.violations, w.first);
        assertEquals(0, w.claimedLeft, "slots left claimed after the batches");
    }

    /**
     * Persistent memory tears below a slot: keys go to the first phase with the values (claimed
     * ahead). Sized so that no resize runs: a resize copies an item's key and meta word into a slot
     * and persists them together, relying on a slot never crossing a cache line (docs/DESIGN.md).
     */
    @Test
    void perBatchOnMemoryThatTearsWordsNeverPublishesAheadOfItsData() {
        Watch w = run("pmem.pool", Durability.PER_BATCH, false, 8, 4096);
        assertTrue(w.checks > 40, "checked at " + w.checks + " persist calls");
        assertEquals(0, w.violations, w.first);
        // Puts of one key in one batch each claim a slot ahead; all but the first give theirs back.
        assertEquals(0, w.claimedLeft, "slots left claimed after the batches");
    }

    @Test
    void perOperationNeverPublishesAheadOfItsData() {
        Watch w = run("op.pool", Durability.PER_OPERATION, false);
        assertTrue(w.checks > 1000, "checked at " + w.checks + " persist calls");
        assertEquals(0, w.violations, w.first);
    }

    @Test
    void onCloseOrSyncPromisesNothingAgainstEarlyWriteback() {
        Watch w = run("sync.pool", Durability.ON_CLOSE_OR_SYNC, true);
        assertTrue(w.violations > 0, "the rule must be seen broken where nothing is persisted");
    }
}
