// Format 2's value heap in GPU memory (heap_params.cuh; format 3's is heap_segments.cuh): one bitmap
// of blocks of one stride, numbered as org.gphash.table.ValueHeap numbers them (chunks sorted by
// offset, each chunk's blocks in address order), so a lower block number is a lower address. A batch
// takes the lowest free blocks (the heap stays compact and is reused from its start), and frees the
// blocks it unlinked once nothing of the batch can read them.
#pragma once
#include <cstdint>
#include "../core/table_params.cuh"
#include "heap_params.cuh"

namespace gphash {

__device__ __forceinline__ uint64_t heap_offset_of(const HeapParams& h, uint64_t block) {
    const auto* first = reinterpret_cast<const uint64_t*>(h.chunk_first);
    const auto* offset = reinterpret_cast<const uint64_t*>(h.chunk_offset);
    int lo = 0;
    int hi = static_cast<int>(h.chunks) - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (first[mid] <= block) lo = mid; else hi = mid - 1;
    }
    return offset[lo] + (block - first[lo]) * h.stride;
}

// The block number of pool offset `off`, or ~0 when it is no block of the heap.
__device__ __forceinline__ uint64_t heap_block_of(const HeapParams& h, uint64_t off) {
    const auto* first = reinterpret_cast<const uint64_t*>(h.chunk_first);
    const auto* offset = reinterpret_cast<const uint64_t*>(h.chunk_offset);
    const auto* length = reinterpret_cast<const uint64_t*>(h.chunk_length);
    if (h.chunks == 0) return ~0ull;
    int lo = 0;
    int hi = static_cast<int>(h.chunks) - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (offset[mid] <= off) lo = mid; else hi = mid - 1;
    }
    if (off < offset[lo] || (off - offset[lo]) % h.stride != 0 || (off - offset[lo]) / h.stride >= length[lo] / h.stride) {
        return ~0ull;
    }
    return first[lo] + (off - offset[lo]) / h.stride;
}

// Free blocks of each word, the input of the scan that ranks free blocks by address.
__device__ void heap_free_counts(const HeapParams& h) {
    const auto* bits = reinterpret_cast<const uint64_t*>(h.bitmap);
    auto* out = reinterpret_cast<uint32_t*>(h.free_prefix);
    for (uint64_t w = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; w < h.words;
         w += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
        out[w] = static_cast<uint32_t>(__popcll(~bits[w]));
    }
}

// Takes word w's free blocks, lowest first, for ranks r, r+1, ... below `wanted`: each block's pool
// offset into blocks[rank], the bits set, the count added to `taken`. Returns the next rank.
__device__ __forceinline__ uint64_t heap_take_word(const HeapParams& h, uint64_t w, uint64_t r, uint64_t wanted,
                                                   uint64_t* blocks, unsigned long long* taken) {
    auto* bits = reinterpret_cast<uint64_t*>(h.bitmap);
    uint64_t word = bits[w];
    uint64_t free = ~word;
    uint32_t got = 0;
    while (free != 0 && r < wanted) {
        const int bit = __ffsll(static_cast<long long>(free)) - 1;
        blocks[r++] = heap_offset_of(h, w * 64 + bit);
        word |= 1ull << bit;
        free &= free - 1;
        ++got;
    }
    bits[w] = word;
    atomicAdd(taken, static_cast<unsigned long long>(got));
    return r;
}

// With free_prefix scanned: the `wanted` lowest free blocks go, in address order, to blocks[0..wanted).
// Returns nothing; a shortfall (fewer free blocks than wanted) is counted in `short_count`.
__device__ void heap_take(const HeapParams& h, uint64_t wanted, uint64_t* blocks, unsigned long long* taken,
                          unsigned long long* short_count) {
    const auto* prefix = reinterpret_cast<const uint32_t*>(h.free_prefix);
    for (uint64_t w = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; w < h.words;
         w += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
        uint64_t r = prefix[w];
        if (r >= wanted) {
            continue;
        }
        r = heap_take_word(h, w, r, wanted, blocks, taken);
        if (w + 1 == h.words && r < wanted) {
            atomicAdd(short_count, static_cast<unsigned long long>(wanted - r));
        }
    }
}

// Frees the block at pool offset `off`. Returns false if it was not in use (a bug: counted by the caller).
__device__ __forceinline__ bool heap_free(const HeapParams& h, uint64_t off) {
    const uint64_t block = heap_block_of(h, off);
    if (block == ~0ull) {
        return false;
    }
    const unsigned long long bit = 1ull << (block & 63);
    const unsigned long long old =
            atomicAnd(reinterpret_cast<unsigned long long*>(h.bitmap) + (block >> 6), ~bit);
    return (old & bit) != 0;
}

}  // namespace gphash
