// Host-side check of the kernels' key hashing and candidate order (key_hash.cuh, candidate_order.cuh:
// nth_bucket, and sorted_buckets held to it),
// built by nvcc and run by CudaAlgorithmAgreementTest, which compares what it prints with the Java
// side (org.gphash.table.KeyHasher, TableLayout.candidateBuckets) on a committed known-answer file and
// on random inputs.
//
// Reads lines "KEYHEX HASHES TOPLOG2 LEVELS SEED..." (seeds as 16 hex digits) from standard input; for
// each prints "H... FP | C...": the key's hashes, its fingerprint and its candidate buckets numbered
// across levels (global_bucket), level by level, in probing order, a bucket two hashes share once
// (as the sub-group probe takes them), all in hex.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gphash/probe/candidate_order.cuh"
#include "gphash/core/key_hash.cuh"
#include "hex_key.h"

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) {
            continue;
        }
        std::istringstream in(line);
        std::string hex;
        int hashes = 0;
        int top_log2 = 0;
        int levels = 0;
        in >> hex >> hashes >> top_log2 >> levels;
        std::vector<uint8_t> key;
        if (hashes < 1 || hashes > gphash::kMaxHashes || levels < 1 || levels > top_log2 + 1 || !parse_hex_key(hex, key)) {
            std::fprintf(stderr, "bad line: %s\n", line.c_str());
            return 2;
        }
        gphash::TableParams t{};
        t.top_log2 = top_log2;
        t.level_count = levels;
        t.hashes = hashes;
        t.key_size = static_cast<int64_t>(key.size());
        gphash::KeyHashes k{};
        for (int j = 0; j < hashes; ++j) {
            std::string seed;
            in >> seed;
            t.seed[j] = std::stoull(seed, nullptr, 16);
            k.h[j] = gphash::hash_key<false>(key.data(), static_cast<int>(key.size()), t.seed[j]);
            std::printf("%016llx ", static_cast<unsigned long long>(k.h[j]));
        }
        k.fp = gphash::fingerprint_of(k.h[0]);
        std::printf("%x |", k.fp);
        for (int d = 0; d < levels; ++d) {
            const uint64_t size = 1ull << (top_log2 - d);
            uint64_t sorted[gphash::kMaxHashes];
            gphash::sorted_buckets(k, hashes, size, sorted);  // the one-shot warp probe's way to the same order
            for (int q = 0; q < hashes; ++q) {
                const uint64_t b = gphash::nth_bucket(k, hashes, size, q);
                if (b != sorted[q]) {
                    std::printf(" sorted_buckets disagrees with nth_bucket at level %d rank %d", d, q);
                }
                if (q == 0 || gphash::nth_bucket(k, hashes, size, q - 1) != b) {
                    std::printf(" %llx", static_cast<unsigned long long>(gphash::global_bucket(t, d, b)));
                }
            }
        }
        std::printf("\n");
    }
    return 0;
}
