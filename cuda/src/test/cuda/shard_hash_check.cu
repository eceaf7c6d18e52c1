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

#include "gphash/shard_hash.cuh"

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
        if (hex.size() % 2 != 0 || hex.empty() || shards < 1) {
            std::fprintf(stderr, "bad line: %s\n", line.c_str());
            return 2;
        }
        std::vector<uint8_t> key(hex.size() / 2);
        for (size_t i = 0; i < key.size(); ++i) {
            key[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
        }
        const uint64_t s = std::stoull(seed, nullptr, 16);
        const uint64_t h = gphash::shard_hash(key.data(), static_cast<int>(key.size()), s);
        const uint32_t shard = gphash::shard_of(key.data(), static_cast<int>(key.size()), s, static_cast<uint32_t>(shards));
        std::printf("%016llx %u\n", static_cast<unsigned long long>(h), shard);
    }
    return 0;
}
