// The order in which a key's candidate buckets are probed: the validity order of docs/DESIGN.md
// (level from the top, bucket number ascending, a bucket two hashes share once), as
// org.gphash.table.Probe takes them (sortedDistinctBuckets), and the numbering of buckets across
// levels that BktCache and the sub-group probe use. __host__ __device__: a host program built by
// nvcc in the tests (cuda/src/test/cuda/key_hash_check.cu) checks it against the Java side
// (CudaAlgorithmAgreementTest).
#pragma once
#include <cstdint>
#include "../core/key_hash.cuh"
#include "../core/table_params.cuh"

namespace gphash {

// The q-th smallest (ties by hash index) of the key's bucket numbers at a level of `size` buckets.
__host__ __device__ __forceinline__ uint64_t nth_bucket(const KeyHashes& k, int hashes, uint64_t size, int q) {
    if (hashes <= 2) {  // the default geometry: the smaller, then the larger
        const uint64_t a = k.h[0] & (size - 1);
        const uint64_t b = hashes == 2 ? k.h[1] & (size - 1) : a;
        return q == 0 ? min(a, b) : max(a, b);
    }
    uint64_t out = 0;
#pragma unroll
    for (int j = 0; j < kMaxHashes; ++j) {
        if (j < hashes) {
            const uint64_t v = k.h[j] & (size - 1);
            int rank = 0;
#pragma unroll
            for (int i = 0; i < kMaxHashes; ++i) {
                if (i < hashes) {
                    const uint64_t w = k.h[i] & (size - 1);
                    rank += (w < v || (w == v && i < j)) ? 1 : 0;
                }
            }
            out = rank == q ? v : out;
        }
    }
    return out;
}

// All of the key's bucket numbers at a level of `size` buckets, in the same order as nth_bucket
// (ascending, ties by hash index): b[q] == nth_bucket(k, hashes, size, q). For a lane that needs every
// rank at once (the one-shot warp probe): one insertion sort costs fewer registers than `hashes`
// calls of nth_bucket. key_hash_check.cu prints both, so CI holds them to each other and to Java.
__host__ __device__ __forceinline__ void sorted_buckets(const KeyHashes& k, int hashes, uint64_t size, uint64_t* b) {
    for (int j = 0; j < hashes; ++j) {
        const uint64_t v = k.h[j] & (size - 1);
        int pos = j;
        while (pos > 0 && b[pos - 1] > v) {
            b[pos] = b[pos - 1];
            --pos;
        }
        b[pos] = v;
    }
}

// Bucket b of level d numbered across levels, top level first: 2^(T+1) - 2^(T+1-d) + b, for a top
// level of 2^T buckets.
__host__ __device__ __forceinline__ uint64_t global_bucket(const TableParams& t, int d, uint64_t b) {
    return (2ull << t.top_log2) - (2ull << (t.top_log2 - d)) + b;
}

}  // namespace gphash
