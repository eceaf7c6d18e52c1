package org.gphash.recovery;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.LongPredicate;

import org.gphash.EntryChunk;
import org.gphash.Geometry;
import org.gphash.cli.Cli;
import org.gphash.cli.ToolVersion;
import org.gphash.format.CloseRecord;
import org.gphash.format.MetaFormat;
import org.gphash.format.SlotMeta;
import org.gphash.shard.ShardManifest;
import org.gphash.table.EntryScan;
import org.gphash.table.PoolInspector;
import org.gphash.table.TableLayout;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code dump POOL FILE}: streams every key's valid item out, read-only. Slots a recovery would
 * clear (INSERT, duplicate) are skipped and counted, so a dump of a crashed pool holds exactly what
 * opening it would show. Items it cannot vouch for are left out and counted, and make it exit 1
 * (issue 27: a dump of a pool copied while it was written held thousands of other keys' values):
 * a fingerprint that does not match the key, a value offset that is no block of the heap, a value
 * block that another item also refers to (which of them owns it cannot be told), a failed item
 * checksum. Without item checksums the values themselves cannot be verified; the summary says so.
 *
 * <p>After a clean close, an item whose value block the close record marks free is left out too
 * (issue 52: a value offset moved onto a free block exported another key's old value with exit 0).
 * A table region changed since the last clean close that no operation reached (as {@code check}
 * reports) makes the dump exit 1: an item the change lost cannot be listed.
 */
@Command(name = "dump", versionProvider = ToolVersion.class,
        description = "Streams every key and value of a pool into FILE (which must not exist), without changing "
                + "the pool; fsyncs FILE. 'gphash import' reads it back. A sharded index's shards go into one FILE.")
final class DumpCommand implements Callable<Integer> {

    /** How the pool's meta words name value blocks: its header was read as this build's format. */

    @Mixin
    Cli.Help help = new Cli.Help();

    @Spec
    CommandSpec spec;

    @Mixin
    Cli.PoolArgument pool = new Cli.PoolArgument();

    @Parameters(index = "1", paramLabel = "FILE", description = "the dump file to write")
    Path file;

    /**
     * A new file, owner-only ({@code rw-------}) whatever the umask: a dump holds every value of the
     * pool, and pools themselves are owner-only.
     */
    static FileChannel createOwnerOnly(Path file) throws IOException {
        return FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rw-------")));
    }

    @Override
    public Integer call() throws IOException {
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            throw new ToolExit.Failure("dump file " + file.toAbsolutePath() + " already exists");
        }
        // A sharded index dumps every shard into one file (import makes one pool of it).
        List<Path> pools = new ArrayList<>();
        if (ShardedDirectories.isShardedIndex(pool.path())) {
            ShardManifest manifest = ShardedDirectories.manifest(pool.path());
            for (int s = 0; s < manifest.shards(); s++) {
                pools.add(ShardManifest.shardPath(pool.path(), s));
            }
        } else {
            pools.add(pool.path());
        }
        long skipped = 0;
        long failedChecksum = 0;
        long torn = 0;
        long badValues = 0;
        long[] shared = new long[1];
        long[] suspect = new long[1];
        int changedRegions = 0;
        boolean checksums = true;
        long count;
        boolean written = false;
        boolean created = false;
        List<PoolInspector> held = new ArrayList<>();
        try {
            for (Path p : pools) {   // every shard held read-only at once: one consistent dump
                held.add(PoolInspector.open(p));
            }
            try (FileChannel ch = createOwnerOnly(file)) {
                created = true;
                OutputStream os = new BufferedOutputStream(Channels.newOutputStream(ch), 1 << 16);
                DumpFormat.Writer w = new DumpFormat.Writer(os, held.get(0).geometry());
                for (PoolInspector in : held) {
                    if (!in.geometry().equals(held.get(0).geometry())) {
                        throw new ToolExit.Failure("shard " + in.path() + " has geometry " + in.geometry()
                                + ", not " + held.get(0).geometry() + " as the first shard has");
                    }
                    Geometry g = in.geometry();
                    HeapMap heap = HeapMap.of(in.header());
                    long[] sharedBlocks = sharedBlocks(in, heap);
                    changedRegions += in.changedRegionSet().cardinality();
                    long[] suspectBlocks = freeAtClose(in, heap);
                    long sharedBefore = shared[0];
                    long suspectBefore = suspect[0];
                    // The same walk as the engines' cursors: every key's valid item, bottom level first.
                    EntryScan.State state = new EntryScan.State();
                    EntryChunk chunk = new EntryChunk(g.keySize(), g.valueSize(), 4096);
                    LongPredicate vouched = offset -> {
                        long block = heap.blockAt(offset);
                        if (block >= 0 && (sharedBlocks[(int) (block >>> 6)] & (1L << block)) != 0) {
                            shared[0]++;
                            return false;
                        }
                        if (block >= 0 && (suspectBlocks[(int) (block >>> 6)] & (1L << block)) != 0) {
                            suspect[0]++;
                            return false;
                        }
                        return block >= 0;
                    };
                    while (!state.done()) {
                        in.readEntries(state, chunk, vouched);
                        for (int i = 0; i < chunk.size(); i++) {
                            w.item(chunk.key(i), chunk.value(i));
                        }
                    }
                    skipped += state.skipped();
                    failedChecksum += state.checksumFailures();
                    torn += state.torn();
                    badValues += state.badValues() - (shared[0] - sharedBefore) - (suspect[0] - suspectBefore);
                    checksums &= in.itemChecksums();
                }
                count = w.finish();
                os.flush();
                ch.force(true);
                written = true;
            }
        } catch (FileAlreadyExistsException e) {
            throw new ToolExit.Failure("dump file " + file.toAbsolutePath() + " already exists");
        } finally {
            for (PoolInspector in : held) {
                in.close();
            }
            if (!written && created) {
                // A dump without its trailer is refused by import anyway; do not leave one behind. Only
                // what this command created: never a file or link that was there before.
                Files.deleteIfExists(file);
            }
        }
        long leftOut = failedChecksum + torn + badValues + shared[0] + suspect[0];
        spec.commandLine().getOut().println("dump: " + count + " items from " + pool.path().toAbsolutePath() + " to "
                + file.toAbsolutePath() + (skipped > 0 ? " (" + skipped + " slots skipped that recovery would clear)" : "")
                + (leftOut > 0 ? "; " + leftOut + " items LEFT OUT that cannot be vouched for: " + torn
                + " whose fingerprint does not match their key, " + badValues + " whose value offset is no block of the heap, "
                + shared[0] + " whose value block another item also refers to, " + suspect[0] + " whose value block was free "
                + "at the last clean close, " + failedChecksum + " that fail their checksums" : "")
                + (changedRegions > 0 ? "; " + changedRegions + " table regions CHANGED since the last clean close ("
                + "`gphash check` names them): items they lost are missing from the dump" : "")
                + (checksums ? "" : "; values not verified (the pool keeps no item checksums)"));
        return leftOut > 0 || changedRegions > 0 ? ToolExit.UNSOUND : ToolExit.SOUND;
    }

    /**
     * A bitmap (numbered as {@code heap} numbers blocks) of the blocks the trusted close record marks
     * free (none without one): no item can have been given one since the close.
     */
    private static long[] freeAtClose(PoolInspector in, HeapMap heap) {
        long[] free = new long[(int) ((heap.blockNumbers() + 63) >>> 6)];
        CloseRecord.Loaded record = in.trustedCloseRecord();
        if (record != null) {
            long[] used = record.usedBits();
            for (int w = 0; w < free.length && w < used.length; w++) {
                free[w] = ~used[w];
            }
        }
        return free;
    }

    /** A bitmap (numbered as {@code heap} numbers blocks) of the blocks that more than one item refers to. */
    private static long[] sharedBlocks(PoolInspector in, HeapMap heap) {
        long[] shared = new long[(int) ((heap.blockNumbers() + 63) >>> 6)];
        MetaFormat format = MetaFormat.of(in.header().formatVersion());
        TableLayout t = in.layout();
        Geometry g = in.geometry();
        MemorySegment s = in.segment();
        for (int d = 0; d < t.levelCount(); d++) {
            long slots = t.bucketsAtDepth(d) * g.slotsPerBucket();
            for (long i = 0; i < slots; i++) {
                long meta = s.get(ValueLayout.JAVA_LONG, t.levelOffset(d) + i * g.slotSize());
                if (!SlotMeta.isItem(meta)) {
                    continue;
                }
                long block = heap.blockOf(format.valueOffset(meta), format.valueClass(meta));
                if (block >= 0 && !heap.claim(block)) {
                    shared[(int) (block >>> 6)] |= 1L << block;
                }
            }
        }
        return shared;
    }
}
