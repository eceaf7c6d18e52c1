// Format 3's value size classes, exactly as org.gphash.format.ValueClasses computes them (issue 53):
// 32 to 256 bytes by 16, then classes 2^(1/4) apart, each rounded up to 16 bytes, equal neighbours
// merged, up to the class that holds 1 MiB and the 8-byte block header. Integer arithmetic only (2^(r/4) as 16.16 fixed
// point, rounded up), so host and device, Java and CUDA, agree bit for bit; a host program built by
// nvcc (cuda/src/test/cuda/format3_check.cu) checks it against the Java side (Format3AgreementTest).
// Each block size gives two classes: 2i framed (the value behind its 8-byte header) and 2i + 1 bare
// (a value of exactly the block's size, nothing else). The kernels write every class, those over 8 KiB
// in runs of whole segments (pipeline/heap_segments.cuh), a value's class chosen by value_class_for
// (slot_meta_format.cuh).
#pragma once
#include <cstdint>

namespace gphash {

constexpr uint32_t kValueHeaderBytes = 8;
constexpr int kValueSizeCount = 64;
constexpr int kValueClassCount = 2 * kValueSizeCount;
// Blocks up to this size step by 16 bytes, above it by 2^(1/4) (a 128-byte value and its header: 144).
constexpr uint32_t kValueLinearMaxBytes = 256;
constexpr uint32_t kMaxBlockBytes = 1246976;

// 2^(r/4) for r = 0..3 in 16.16 fixed point, rounded up.
__host__ __device__ __forceinline__ uint64_t quarter_step(int r) {
    return r == 0 ? 65536ull : r == 1 ? 77936ull : r == 2 ? 92682ull : 110218ull;
}

// The block size of class step s before equal neighbours are merged.
__host__ __device__ __forceinline__ uint32_t class_step_bytes(int s) {
    const uint64_t raw = ((32ull << (s >> 2)) * quarter_step(s & 3) + 65535ull) / 65536ull;
    return static_cast<uint32_t>((raw + 15ull) & ~15ull);
}

// The distinct block sizes in order, one per call: class 0's, class 1's, ... (32 to 256 by 16 bytes,
// then the quarter-octave steps above 256).
struct ValueClassWalk {
    int step = 0;
    uint32_t last = 0;
    __host__ __device__ uint32_t next() {
        if (last < kValueLinearMaxBytes) {
            last = last == 0 ? 32u : last + 16u;
            return last;
        }
        for (;;) {
            const uint32_t b = class_step_bytes(step++);
            if (b > last) {
                last = b;
                return b;
            }
        }
    }
};

// The bytes of a block of class c (0 <= c < kValueClassCount), header included where it has one.
__host__ __device__ inline uint32_t value_block_bytes(int c) {
    ValueClassWalk walk;
    uint32_t b = walk.next();
    for (int i = 0; i < (c >> 1); ++i) {
        b = walk.next();
    }
    return b;
}

// Whether blocks of class c hold a value of their own size and no header.
__host__ __device__ __forceinline__ bool value_class_is_bare(int c) { return (c & 1) != 0; }

// The framed class of the least block that holds a value of `length` bytes and its header; -1 past
// the largest.
__host__ __device__ inline int value_class_of(uint64_t length) {
    const uint64_t need = length + kValueHeaderBytes;
    if (need > kMaxBlockBytes) {
        return -1;
    }
    ValueClassWalk walk;
    for (int i = 0;; ++i) {
        if (walk.next() >= need) {
            return 2 * i;
        }
    }
}

// The bare class whose block has exactly `length` bytes; -1 where no block does.
__host__ __device__ inline int value_bare_class_of(uint64_t length) {
    ValueClassWalk walk;
    for (int i = 0; i < kValueSizeCount; ++i) {
        const uint32_t b = walk.next();
        if (b == length) {
            return 2 * i + 1;
        }
        if (b > length) {
            return -1;
        }
    }
    return -1;
}

}  // namespace gphash
