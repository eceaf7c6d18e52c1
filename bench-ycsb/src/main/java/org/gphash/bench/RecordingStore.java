package org.gphash.bench;

import java.io.IOException;
import java.io.UncheckedIOException;

/** A store that writes every batch it executes to a trace before passing it on. Single-threaded. */
final class RecordingStore implements StoreUnderTest {

    private final StoreUnderTest store;
    private final TraceWriter writer;

    RecordingStore(StoreUnderTest store, TraceWriter writer) {
        this.store = store;
        this.writer = writer;
    }

    @Override
    public String name() {
        return store.name();
    }

    @Override
    public String description() {
        return store.description() + ", recorded";
    }

    @Override
    public void execute(OpBatch batch, OpResults results) {
        try {
            writer.write(batch);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        store.execute(batch, results);
    }

    @Override
    public Figures figures() {
        return store.figures();
    }

    @Override
    public void close() throws Exception {
        store.close();
    }
}
