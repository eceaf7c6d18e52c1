package org.gphash.bench;

/**
 * The shape of the Criteo Kaggle display-advertising data set (the DLRM paper's "Kaggle" set):
 * 13 dense and 26 categorical features. Cardinalities are the per-feature counts of distinct
 * values that the DLRM reference implementation reports for this data set (its README and
 * data-loader output), i.e. the embedding table sizes.
 */
final class CriteoKaggle {

    static final int DENSE_FEATURES = 13;

    static final long[] CARDINALITIES = {
        1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
        27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572,
    };

    static final int SPARSE_FEATURES = CARDINALITIES.length;

    /** Embedding vectors: 32 float32 values, 128 bytes (the value size of the trace). */
    static final int EMBEDDING_DIM = 32;
    static final int VALUE_SIZE = EMBEDDING_DIM * Float.BYTES;

    private CriteoKaggle() {
    }

    /** The key of row {@code id} of feature {@code feature}: the feature in the top byte. */
    static long key(int feature, long id) {
        return (long) feature << 56 | (id & 0x00FF_FFFF_FFFF_FFFFL);
    }
}
