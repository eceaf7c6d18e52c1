package org.gphash.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import org.gphash.Journaling;
import org.gphash.error.PoolIoException;

/**
 * The journal's writing end: appends records in sequence-number order to the current segment and
 * flushes them with group commit.
 *
 * <p>Appending (stamping a sequence number and handing the bytes to the kernel) happens under one
 * lock and costs a write to the page cache. Flushing happens outside it, on the flusher thread: it
 * forces the segment and publishes the highest sequence number the force covered; a caller that
 * needs its record durable waits for that number to pass its own. Every caller that appended while
 * the last force ran is covered by the next one, so under load one fdatasync serves many calls.
 *
 * <p>A segment that fills up is forced and closed before the next is created (and the directory
 * forced), so every segment but the last is durable whole.
 */
final class Journal implements AutoCloseable {

    /** What the flusher forces: the current segment and the last sequence number written to it, published together. */
    private record Tail(FileChannel channel, long seq, long end) {
    }

    private final Path dir;
    private final int keySize;
    private final int valueSize;
    /** Whether records carry each value's length ({@link RecordFormat#VERSION_LENGTHS} segments). */
    private final boolean lengths;
    private final long journalId;
    private final Journaling settings;
    private final ReentrantLock appendLock = new ReentrantLock();
    /** Held while a segment is forced or closed, so that the flusher never forces a closed channel. */
    private final ReentrantLock forceLock = new ReentrantLock();
    private final ConcurrentLinkedQueue<RecordBody> bodies = new ConcurrentLinkedQueue<>();
    private final Object durableMonitor = new Object();

    private FileChannel channel;
    private long segmentFirstSeq;
    private long segmentBytes;
    private long nextSeq;
    private long bytesWritten;
    /** Bytes appended since the flusher was last woken by an append (under the append lock). */
    private long unsignalled;
    /** Appends that add up to this wake the flusher without waiting for a caller to ask. */
    private static final long STREAM_BYTES = 16L << 20;
    private volatile Tail tail;
    private volatile long durableSeq;
    private volatile boolean closed;
    private volatile Throwable failure;
    private final Thread flusher;
    private final ReentrantLock wakeLock = new ReentrantLock();
    private final Condition wake = wakeLock.newCondition();
    /** Test hook: told after each force with the segment's first sequence number and the bytes it made durable. */
    private final FlushObserver observer;

    /** Told of every force: which segment, how many of its bytes are now durable. For the crash harness. */
    @FunctionalInterface
    interface FlushObserver {
        FlushObserver NONE = (segment, bytes) -> { };

        void forced(long segmentFirstSeq, long durableBytes);
    }

    /**
     * Opens the journal for appending after its last valid record.
     *
     * @param lengths whether its records carry each value's length (its engine takes values of any
     *                length up to the value size); a segment already begun keeps its own version
     * @param end     where the journal's valid records end (from {@link JournalReader})
     */
    Journal(Path dir, int keySize, int valueSize, boolean lengths, long journalId, Journaling settings,
            JournalReader.End end, FlushObserver observer) {
        this.dir = dir;
        this.keySize = keySize;
        this.valueSize = valueSize;
        this.journalId = journalId;
        this.settings = settings;
        this.observer = observer;
        this.nextSeq = end.nextSeq();
        // Records go on in the last segment only where it is of this journal's version; else a new one starts.
        boolean appendToLast = end.segment() != null && end.lengths() == lengths;
        this.lengths = lengths;
        this.durableSeq = end.nextSeq() - 1;
        try {
            if (end.segment() != null && !appendToLast) {
                cutAndClose(end);
                startSegment(nextSeq);
            } else if (end.segment() != null) {
                channel = FileChannel.open(end.segment(), StandardOpenOption.WRITE, StandardOpenOption.READ);
                if (channel.size() > end.validBytes()) {
                    channel.truncate(end.validBytes());   // a torn last record: new records follow the valid ones
                    channel.force(true);
                }
                channel.position(end.validBytes());
                channel.force(false);   // records a crashed process wrote may still be only in the page cache
                segmentFirstSeq = end.segmentFirstSeq();
                segmentBytes = end.validBytes();
                observer.forced(segmentFirstSeq, segmentBytes);
            } else {
                Files.deleteIfExists(JournalFiles.segment(dir, nextSeq));   // a last segment whose header was torn
                startSegment(nextSeq);
            }
        } catch (IOException e) {
            throw new PoolIoException("cannot open journal in " + dir + ": " + e.getMessage(), e);
        }
        tail = new Tail(channel, nextSeq - 1, segmentBytes);
        if (settings.flush() != Journaling.Flush.NEVER) {
            flusher = Thread.ofPlatform().daemon().name("gphash-journal-flusher").start(this::flushLoop);
        } else {
            flusher = null;
        }
    }

    /**
     * The last segment, of the other version, ends at its valid records (a torn tail cut off and the
     * cut forced) before a segment of this journal's version starts after it.
     */
    private static void cutAndClose(JournalReader.End end) throws IOException {
        if (end.validBytes() <= RecordFormat.SEGMENT_HEADER) {
            Files.deleteIfExists(end.segment());   // no record in it: the new segment takes its name
            return;
        }
        try (FileChannel ch = FileChannel.open(end.segment(), StandardOpenOption.WRITE)) {
            if (ch.size() > end.validBytes()) {
                ch.truncate(end.validBytes());
            }
            ch.force(true);
        }
    }

    private void startSegment(long firstSeq) throws IOException {
        Path file = JournalFiles.segment(dir, firstSeq);
        FileChannel ch = JournalFiles.createNew(file);
        ByteBuffer h = RecordFormat.segmentHeader(keySize, valueSize, lengths, firstSeq, journalId);
        while (h.hasRemaining()) {
            ch.write(h);
        }
        ch.force(true);
        JournalFiles.fsyncDirectory(dir);
        channel = ch;
        segmentFirstSeq = firstSeq;
        segmentBytes = RecordFormat.SEGMENT_HEADER;
    }

    /** A record body to fill, from the pool; give it back with {@link #release}. */
    RecordBody body() {
        RecordBody b = bodies.poll();
        if (b == null) {
            b = new RecordBody(keySize, valueSize, lengths);
        }
        b.clear();
        return b;
    }

    void release(RecordBody b) {
        b.clear();   // lets go of a batch's columns a record borrowed
        bodies.offer(b);
    }

    /**
     * Appends a sealed body as the next record; returns its sequence number. The caller then waits
     * with {@link #awaitDurable} where its flush policy says so.
     */
    long append(RecordBody body) {
        appendLock.lock();
        try {
            checkOpen();   // under the lock: no record is appended after close() took its last force
            long seq = nextSeq;
            long bytes = body.bytes();
            if (segmentBytes + bytes > settings.segmentBytes() && segmentBytes > RecordFormat.SEGMENT_HEADER) {
                roll(seq);
            }
            ByteBuffer[] parts = body.stamp(seq);
            long left = bytes;
            while (left > 0) {
                left -= channel.write(parts);
            }
            nextSeq = seq + 1;
            segmentBytes += bytes;
            bytesWritten += bytes;
            tail = new Tail(channel, seq, segmentBytes);
            unsignalled += bytes;
            if (unsignalled >= STREAM_BYTES && flusher != null) {
                // A large batch's records: the disk starts on them while the rest are still being
                // written, so that its caller's last wait covers only the tail.
                unsignalled = 0;
                signalFlusher();
            }
            return seq;
        } catch (IOException e) {
            failure = e;
            throw new PoolIoException("cannot append to journal in " + dir + ": " + e.getMessage()
                    + " (the write was applied in memory but is not durable; the index refuses further writes)", e);
        } finally {
            appendLock.unlock();
        }
    }

    /** Forces the full segment, closes it, and starts the next one at {@code firstSeq}. Under the append lock. */
    private void roll(long firstSeq) throws IOException {
        forceLock.lock();
        try {
            channel.force(false);
            observer.forced(segmentFirstSeq, segmentBytes);
            channel.close();
            publishDurable(firstSeq - 1);
            startSegment(firstSeq);
            tail = new Tail(channel, firstSeq - 1, segmentBytes);
        } finally {
            forceLock.unlock();
        }
    }

    /** The sequence number the next record gets: every record before it has been written. */
    long nextSeq() {
        appendLock.lock();
        try {
            return nextSeq;
        } finally {
            appendLock.unlock();
        }
    }

    /** Journal bytes appended since this journal was opened. */
    long bytesWritten() {
        appendLock.lock();
        try {
            return bytesWritten;
        } finally {
            appendLock.unlock();
        }
    }

    long durableSeq() {
        return durableSeq;
    }

    /** Waits until record {@code seq} is durable, asking the flusher for a force (the flush policy PER_CALL). */
    void awaitDurable(long seq) {
        if (durableSeq >= seq) {
            return;
        }
        if (flusher == null) {
            forceNow();
            return;
        }
        signalFlusher();
        // Spin briefly (a force under load completes within tens of microseconds of the next), then park.
        for (int spins = 0; durableSeq < seq; spins++) {
            checkFailure();
            if (spins < 64) {
                Thread.onSpinWait();
            } else {
                synchronized (durableMonitor) {
                    if (durableSeq < seq && failure == null && !closed) {
                        try {
                            durableMonitor.wait(1);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new PoolIoException("interrupted while waiting for the journal flush");
                        }
                    }
                }
                if (closed && durableSeq < seq) {
                    checkFailure();
                    forceNow();
                }
            }
        }
    }

    /** Forces everything appended so far, on the calling thread. */
    void forceNow() {
        checkFailure();
        forceLock.lock();
        try {
            Tail t = tail;
            if (t.seq() <= durableSeq) {
                return;
            }
            if (!t.channel().isOpen()) {
                // Closed (abandoned) with records not forced: they are not durable, and must not be said to be.
                throw new PoolIoException("journal in " + dir + " was closed before record " + t.seq() + " was flushed");
            }
            t.channel().force(false);
            observer.forced(segmentFirstSeq, t.end());
            publishDurable(t.seq());
        } catch (IOException e) {
            failure = e;
            throw new PoolIoException("cannot flush journal in " + dir + ": " + e.getMessage(), e);
        } finally {
            forceLock.unlock();
        }
    }

    private void publishDurable(long seq) {
        if (seq > durableSeq) {
            durableSeq = seq;
            synchronized (durableMonitor) {
                durableMonitor.notifyAll();
            }
        }
    }

    private void signalFlusher() {
        wakeLock.lock();
        try {
            wake.signal();
        } finally {
            wakeLock.unlock();
        }
    }

    private void flushLoop() {
        boolean interval = settings.flush() == Journaling.Flush.INTERVAL;
        long periodNanos = interval ? settings.flushInterval().toNanos() : 0;
        while (!closed) {
            try {
                wakeLock.lock();
                try {
                    if (tail.seq() <= durableSeq && !closed) {
                        if (interval) {
                            wake.awaitNanos(periodNanos);
                        } else {
                            wake.await(10, TimeUnit.MILLISECONDS);
                        }
                    } else if (interval) {
                        wake.awaitNanos(periodNanos);
                    }
                } finally {
                    wakeLock.unlock();
                }
                if (closed) {
                    return;
                }
                if (tail.seq() > durableSeq) {
                    forceNow();
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                // failure is recorded; waiters see it
                synchronized (durableMonitor) {
                    durableMonitor.notifyAll();
                }
                LockSupport.parkNanos(1_000_000);
            }
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new org.gphash.IndexClosedException(dir);
        }
        checkFailure();
    }

    private void checkFailure() {
        Throwable f = failure;
        if (f != null) {
            throw new PoolIoException("the journal in " + dir + " failed earlier (" + f.getMessage()
                    + "): no write can be made durable; close the index and open it again", f);
        }
    }

    /**
     * Deletes the segments every record of which comes before {@code seq} (a complete checkpoint
     * holds their effects), never the current one.
     */
    void dropBefore(long seq) {
        List<Path> segments = JournalFiles.list(dir, false);
        boolean dropped = false;
        for (int i = 0; i + 1 < segments.size(); i++) {
            long nextFirst = JournalFiles.seqOf(segments.get(i + 1), false);
            if (nextFirst <= seq && JournalFiles.seqOf(segments.get(i), false) != currentSegment()) {
                try {
                    Files.deleteIfExists(segments.get(i));
                    dropped = true;
                } catch (IOException e) {
                    throw new PoolIoException("cannot drop journal segment " + segments.get(i) + ": " + e.getMessage(), e);
                }
            }
        }
        if (dropped) {
            JournalFiles.fsyncDirectory(dir);
        }
    }

    private long currentSegment() {
        appendLock.lock();
        try {
            return segmentFirstSeq;
        } finally {
            appendLock.unlock();
        }
    }

    /** Forces what was appended and closes the segment. */
    @Override
    public void close() {
        appendLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;   // no append after this; the force below covers every one before it
        } finally {
            appendLock.unlock();
        }
        try {
            if (failure == null) {
                forceNow();
            }
        } finally {
            shutdown();
        }
    }

    /** Closes without forcing, as a crash would leave it (the page cache keeps what was written). */
    void abandon() {
        appendLock.lock();
        try {
            closed = true;
        } finally {
            appendLock.unlock();
        }
        shutdown();
    }

    private void shutdown() {
        signalFlusher();
        if (flusher != null) {
            try {
                flusher.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (durableMonitor) {
            durableMonitor.notifyAll();
        }
        forceLock.lock();
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing after a failure: nothing more to say
        } finally {
            forceLock.unlock();
        }
    }
}
