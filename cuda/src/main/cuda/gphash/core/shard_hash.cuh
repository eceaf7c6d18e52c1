// The shard function of a sharded index, exactly as org.gphash.shard.ShardFunction computes it: a
// keyed hash of the key's little-endian 64-bit words (the last zero-padded), each folded in by a
// 128-bit multiply whose halves are xored (wyhash's construction), scaled to the shard count by the
// high half of a 64x64 multiply. Independent of the table's hashes (key_hash.cuh) on purpose.
// __host__ __device__: device-resident batches are split by shard on the GPU with it
// (pipeline/shard_split.cuh); a host program built by nvcc (cuda/src/test/cuda/shard_hash_check.cu)
// checks it against the Java side (ShardHashAgreementTest).
#pragma once
#include <cstdint>
#include "key_hash.cuh"

namespace gphash {

constexpr uint64_t kShardP0 = 0xa0761d6478bd642full;
constexpr uint64_t kShardP1 = 0xe7037ed1a0b428dbull;
constexpr uint64_t kShardP2 = 0x8ebc6af09c88c6e3ull;

// The high 64 bits of a * b.
__host__ __device__ __forceinline__ uint64_t mul_hi64(uint64_t a, uint64_t b) {
#ifdef __CUDA_ARCH__
    return __umul64hi(a, b);
#else
    return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

// The 128-bit product of a and b, its halves xored.
__host__ __device__ __forceinline__ uint64_t mum64(uint64_t a, uint64_t b) {
    return (a * b) ^ mul_hi64(a, b);
}

// The keyed hash of a key of key_size bytes at p.
__host__ __device__ __forceinline__ uint64_t shard_hash(const uint8_t* p, int key_size, uint64_t seed) {
    uint64_t h = seed ^ kShardP0 ^ static_cast<uint64_t>(key_size);
    const int words = (key_size + 7) / 8;
    for (int w = 0; w < words; ++w) {
        h = mum64(h ^ key_word(p, w, key_size), kShardP1);
    }
    return mum64(h ^ kShardP2, h ^ kShardP1);
}

// The shard (0 to shards - 1) of the key at p.
__host__ __device__ __forceinline__ uint32_t shard_of(const uint8_t* p, int key_size, uint64_t seed, uint32_t shards) {
    return shards <= 1 ? 0u : static_cast<uint32_t>(mul_hi64(shard_hash(p, key_size, seed), shards));
}

}  // namespace gphash
