// Host-side check of the shard function (shard_hash.cuh), built by nvcc and run by
// ShardHashAgreementTest, which compares what it prints with the Java side
// (org.gphash.shard.ShardFunction) on a committed known-answer file and on random inputs.
//
// Reads lines "KEYHEX SEED SHARDS" (seed as 16 hex digits, shards in decimal) from standard input; for
// each prints "HASH SHARD" (the hash in 16 hex digits, the shard in decimal).
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gphash/core/shard_hash.cuh"
#include "hex_key.h"

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) {
            continue;
        }
        std::istringstream in(line);
        std::string hex;
        std::string seed;
        unsigned long shards = 0;
        in >> hex >> seed >> shards;
        std::vector<uint8_t> key;
        if (shards < 1 || !parse_hex_key(hex, key)) {
            std::fprintf(stderr, "bad line: %s\n", line.c_str());
            return 2;
        }
        const uint64_t s = std::stoull(seed, nullptr, 16);
        const uint64_t h = gphash::shard_hash(key.data(), static_cast<int>(key.size()), s);
        const uint32_t shard = gphash::shard_of(key.data(), static_cast<int>(key.size()), s, static_cast<uint32_t>(shards));
        std::printf("%016llx %u\n", static_cast<unsigned long long>(h), shard);
    }
    return 0;
}
