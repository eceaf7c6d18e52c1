// BktCache's selection of the hottest buckets (GPHash §3.3, docs/DESIGN.md "BktCache"): a radix select
// over the 32-bit scores finds the threshold admitting the k highest nonzero ones, a digit of 8 bits
// per pass, most significant first; a bucket is admitted when its score is above the threshold, or
// equal to it while ties are still to take. The histogram of each pass is counted by many threads
// (cache_load.cuh); the walk over it and the admission rule are here.
//
// __host__ __device__ and free of pool reads: a host program of the tests (cuda/src/test/cuda/
// cache_select_check.cu) built by nvcc runs the same passes on the CPU, and CacheSelectAgreementTest
// holds its choice to the Java reference (org.gphash.bktcache.loading.TopBuckets, ThresholdSearch) in CI.
#pragma once
#include <cstdint>

namespace gphash {

// The select's state between passes (LoadParams.state), zeroed before a load.
enum LoadState : int {
    kPrefix = 0, kPrefixMask = 1, kAbove = 2, kThreshold = 3, kTies = 4, kTiesTaken = 5,
    kIncoming = 6, kFreeTaken = 7, kLoaded = 8, kAbandoned = 9, kTakeAll = 10, kChosen = 11,
    kLoadStateCount = 16
};

constexpr int kSelectDigits = 256;

// Whether a pass counts score s: nonzero (0 is a bucket never accessed) and under the prefix so far.
__host__ __device__ __forceinline__ bool under_prefix(const unsigned long long* st, uint32_t s) {
    return s != 0 && (s & static_cast<uint32_t>(st[kPrefixMask])) == static_cast<uint32_t>(st[kPrefix]);
}

// The digit of score s that the pass at `shift` counts by.
__host__ __device__ __forceinline__ int select_digit(uint32_t s, int shift) { return static_cast<int>((s >> shift) & 0xFF); }

// After the pass at `shift` (24, 16, 8, then 0) has filled `hist`: fixes the digit holding the k-th
// highest score, or, at the first pass, finds that every nonzero score fits (threshold 1, all taken
// as ties). Clears `hist` for the next pass.
__host__ __device__ __forceinline__ void pick_digit(unsigned long long* st, unsigned long long* hist, unsigned long long k,
                                                    int shift) {
    if (st[kTakeAll] == 0) {
        const unsigned long long need = k - st[kAbove];
        unsigned long long total = 0;
        for (int d = 0; d < kSelectDigits; ++d) {
            total += hist[d];
        }
        if (shift == 24 && total <= need) {
            st[kThreshold] = 1;  // every accessed bucket fits
            st[kTies] = total;
            st[kTakeAll] = 1;
        } else {
            unsigned long long above = 0;
            for (int d = kSelectDigits - 1; d >= 0; --d) {
                if (above + hist[d] >= need) {
                    st[kPrefix] |= static_cast<unsigned long long>(d) << shift;
                    st[kPrefixMask] |= 0xFFull << shift;
                    st[kAbove] += above;
                    if (shift == 0) {
                        st[kThreshold] = st[kPrefix];
                        st[kTies] = need - above;
                    }
                    break;
                }
                above += hist[d];
            }
        }
    }
    for (int d = 0; d < kSelectDigits; ++d) {
        hist[d] = 0;
    }
}

// Whether score s ties with the threshold (and so needs a rank among the ties).
__host__ __device__ __forceinline__ bool is_tie(uint32_t s, uint32_t threshold) { return s != 0 && s == threshold; }

// Whether a bucket of score s is admitted; `rank`: its place among the ties (ties: how many to take).
__host__ __device__ __forceinline__ bool admitted(uint32_t s, uint32_t threshold, unsigned long long rank,
                                                  unsigned long long ties) {
    return s != 0 && (s > threshold || (is_tie(s, threshold) && rank < ties));
}

}  // namespace gphash
