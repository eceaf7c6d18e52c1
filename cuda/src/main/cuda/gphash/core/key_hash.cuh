// Key words and hashing, exactly as org.gphash.table.KeyHasher computes them: the key read as
// little-endian 64-bit words (the last zero-padded), MurmurHash3-x64-style mixing per word, fmix64.
// What does not read the pool is __host__ __device__: a host program built by nvcc in the tests
// (cuda/src/test/cuda/key_hash_check.cu) checks it against the Java side (CudaAlgorithmAgreementTest).
#pragma once
#include <cstdint>
#include "slot_meta.cuh"
#include "table_params.cuh"

namespace gphash {

// Word w of a key of key_size bytes at p; bytes past the key read as zero.
__host__ __device__ __forceinline__ uint64_t key_word(const uint8_t* p, int w, int key_size) {
    const int start = w * 8;
    const int len = min(8, key_size - start);
    if (len == 8 && (reinterpret_cast<uintptr_t>(p + start) & 7) == 0) {
        return *reinterpret_cast<const uint64_t*>(p + start);
    }
    uint64_t x = 0;
    for (int i = len - 1; i >= 0; --i) {
        x = (x << 8) | p[start + i];
    }
    return x;
}

// The same, for a key stored in the pool: read past L1, since the slot may be rewritten by another SM.
__device__ __forceinline__ uint64_t pool_key_word(const uint8_t* p, int w, int key_size) {
    uint64_t x = __ldcg(reinterpret_cast<const unsigned long long*>(p + w * 8));  // slots are 8-aligned
    const int len = key_size - w * 8;
    if (len < 8) {
        x &= (1ull << (len * 8)) - 1;  // bytes past the key are padding, possibly stale
    }
    return x;
}

__host__ __device__ __forceinline__ uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

__host__ __device__ __forceinline__ uint64_t fmix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

__host__ __device__ __forceinline__ uint64_t mix_word(uint64_t h, uint64_t word) {
    uint64_t k = word * 0x87c37b91114253d5ull;
    k = rotl64(k, 31);
    k *= 0x4cf5ad432745937full;
    h ^= k;
    h = rotl64(h, 27);
    return h * 5 + 0x52dce729ull;
}

template <bool InPool>
__host__ __device__ __forceinline__ uint64_t hash_key(const uint8_t* key, int key_size, uint64_t seed) {
    uint64_t h = seed ^ (static_cast<uint64_t>(key_size) * 0x9E3779B97F4A7C15ull);
    const int words = (key_size + 7) / 8;
    for (int w = 0; w < words; ++w) {
        if constexpr (InPool) {
            h = mix_word(h, pool_key_word(key, w, key_size));  // device only: the pool is read on the GPU
        } else {
            h = mix_word(h, key_word(key, w, key_size));
        }
    }
    return fmix64(h ^ static_cast<uint64_t>(key_size));
}

__host__ __device__ __forceinline__ uint32_t fingerprint_of(uint64_t hash0) {
    uint32_t fp = static_cast<uint32_t>(hash0 >> 48);
    return fp < kFirstValidFingerprint ? fp + kFirstValidFingerprint : fp;
}

// All hashes of a key and its fingerprint.
struct KeyHashes {
    uint64_t h[kMaxHashes];
    uint32_t fp;
};

template <bool InPool>
__device__ __forceinline__ KeyHashes hash_all(const TableParams& t, const uint8_t* key) {
    KeyHashes k{};
    for (int j = 0; j < t.hashes; ++j) {
        k.h[j] = hash_key<InPool>(key, static_cast<int>(t.key_size), t.seed[j]);
    }
    k.fp = fingerprint_of(k.h[0]);
    return k;
}

// Lane `leader`'s hashes, broadcast to the whole warp.
__device__ __forceinline__ KeyHashes shfl_hashes(const KeyHashes& k, int leader, int hashes) {
    KeyHashes r{};
    for (int j = 0; j < hashes; ++j) {
        r.h[j] = __shfl_sync(kFullMask, k.h[j], leader);
    }
    r.fp = __shfl_sync(kFullMask, k.fp, leader);
    return r;
}

}  // namespace gphash
