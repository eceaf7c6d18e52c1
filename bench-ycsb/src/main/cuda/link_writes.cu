// Link writes: how fast a GPU's stores reach a registered, file-backed host mapping (the pool's
// memory path), by store shape, fence and overlap. Issue 26's write phases: values (128 B, sorted),
// meta words (8 B, sorted scattered), claim+key (16 B), whole 64-byte lines, and a value phase beside
// a meta-word phase on two streams. Standalone: nvcc -O3 -arch=sm_90 -o link_writes link_writes.cu
// Run: link_writes [path-on-/dev/shm] [ops]. Prints one line per case: ms (best of 5), M stores/s, GB/s.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

static constexpr uint64_t kIndexBytes = 2ull << 30;   // slots: first 2 GiB
static constexpr uint64_t kHeapBytes = 2ull << 30;    // value blocks: next 2 GiB

__device__ __forceinline__ uint64_t gthread() { return blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; }
__device__ __forceinline__ uint64_t gthreads() { return (uint64_t) gridDim.x * blockDim.x; }

// 128-byte values: 16 lanes a value, 8 bytes each, then a system fence (pipe_write_values' shape).
template <bool Fence>
__global__ void values(uint8_t* pool, const uint64_t* to, const uint8_t* src, uint64_t n) {
    const uint64_t lane = threadIdx.x & 15;
    for (uint64_t i = gthread() >> 4; i < n; i += gthreads() >> 4) {
        auto* d = reinterpret_cast<unsigned long long*>(pool + to[i]);
        const auto* s = reinterpret_cast<const unsigned long long*>(src + (i & 4095) * 128);
        __stcg(d + lane, __ldcg(s + lane));
        if (Fence) __threadfence_system();
    }
}

// One 8-byte volatile store a thread (pipe_publish's shape).
template <bool Fence>
__global__ void words(uint8_t* pool, const uint64_t* at, uint64_t n) {
    for (uint64_t i = gthread(); i < n; i += gthreads()) {
        *reinterpret_cast<volatile uint64_t*>(pool + at[i]) = i | 1;
        if (Fence) __threadfence_system();
    }
}

// One 16-byte store a thread (store_claim_and_key's shape).
__global__ void pairs(uint8_t* pool, const uint64_t* at, uint64_t n) {
    for (uint64_t i = gthread(); i < n; i += gthreads()) {
        uint8_t* s = pool + at[i];
        asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(s), "l"(1ull), "l"(i) : "memory");
        __threadfence_system();
    }
}

// A whole 64-byte line a write: 8 lanes, 8 bytes each (a bucket's meta words side by side).
// `stride`: the line of every stride-th address (2 for the lines of the 2-a-line list).
__global__ void lines(uint8_t* pool, const uint64_t* at, uint64_t n, uint64_t stride) {
    const uint64_t lane = threadIdx.x & 7;
    for (uint64_t i = gthread() >> 3; i < n; i += gthreads() >> 3) {
        auto* d = reinterpret_cast<volatile unsigned long long*>(pool + (at[i * stride] & ~63ull));
        d[lane] = i + lane;
        __threadfence_system();
    }
}

// Both phases in one launch: the first `vb` blocks write values, the rest meta words.
__global__ void fused(uint8_t* pool, const uint64_t* vto, const uint8_t* src, const uint64_t* at, uint64_t n, unsigned vb) {
    if (blockIdx.x < vb) {
        const uint64_t lane = threadIdx.x & 15;
        const uint64_t t = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;
        for (uint64_t i = t >> 4; i < n; i += ((uint64_t) vb * blockDim.x) >> 4) {
            auto* d = reinterpret_cast<unsigned long long*>(pool + vto[i]);
            const auto* s = reinterpret_cast<const unsigned long long*>(src + (i & 4095) * 128);
            __stcg(d + lane, __ldcg(s + lane));
            __threadfence_system();
        }
    } else {
        const uint64_t t = (blockIdx.x - vb) * (uint64_t) blockDim.x + threadIdx.x;
        for (uint64_t i = t; i < n; i += (uint64_t) (gridDim.x - vb) * blockDim.x) {
            *reinterpret_cast<volatile uint64_t*>(pool + at[i]) = i | 1;
            __threadfence_system();
        }
    }
}

static std::vector<uint64_t> sorted_random(uint64_t n, uint64_t base, uint64_t units, uint64_t unit, uint64_t seed) {
    std::mt19937_64 r(seed);
    std::vector<uint64_t> v(n);
    for (auto& x : v) x = base + (r() % units) * unit;
    std::sort(v.begin(), v.end());
    return v;
}

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : "/dev/shm/link_writes.pool";
    const uint64_t n = argc > 2 ? strtoull(argv[2], nullptr, 0) : (1ull << 20);
    const uint64_t bytes = kIndexBytes + kHeapBytes;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, bytes) != 0) { perror(path); return 1; }
    auto* host = static_cast<uint8_t*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (host == MAP_FAILED) { perror("mmap"); return 1; }
    for (uint64_t i = 0; i < bytes; i += 4096) host[i] = 0;  // fault every page in, as an open pool is
    CK(cudaHostRegister(host, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
    uint8_t* pool;
    CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&pool), host, 0));

    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    auto slots = sorted_random(n, 0, kIndexBytes / 16, 16, 1);
    auto blocks = sorted_random(n, kIndexBytes, kHeapBytes / 128, 128, 2);
    std::vector<uint64_t> dense(n);
    for (uint64_t i = 0; i < n; ++i) dense[i] = kIndexBytes + i * 128;
    // The same number of writes, k of them to each 64-byte line (adjacent slots): do writes that
    // share a line cost more than writes to lines of their own?
    auto shared_lines = [&](uint64_t k) {
        std::vector<uint64_t> lines_at = sorted_random(n / k, 0, kIndexBytes / 64, 64, 4);
        std::vector<uint64_t> v;
        for (uint64_t line : lines_at) for (uint64_t j = 0; j < k; ++j) v.push_back(line + 16 * j);
        return v;
    };
    std::vector<uint64_t> pairs_at = shared_lines(2), quads_at = shared_lines(4);
    std::vector<uint64_t> unsorted_slots(slots);
    std::shuffle(unsorted_slots.begin(), unsorted_slots.end(), std::mt19937_64(3));
    uint64_t *d_slots, *d_blocks, *d_dense, *d_unsorted, *d_pairs, *d_quads;
    CK(cudaMalloc(&d_pairs, n * 8)); CK(cudaMalloc(&d_quads, n * 8));
    CK(cudaMemcpy(d_pairs, pairs_at.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_quads, quads_at.data(), n * 8, cudaMemcpyHostToDevice));
    uint8_t* d_src;
    CK(cudaMalloc(&d_slots, n * 8)); CK(cudaMalloc(&d_blocks, n * 8)); CK(cudaMalloc(&d_dense, n * 8));
    CK(cudaMalloc(&d_unsorted, n * 8)); CK(cudaMalloc(&d_src, 4096 * 128));
    CK(cudaMemcpy(d_slots, slots.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_blocks, blocks.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_dense, dense.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_unsorted, unsorted_slots.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemset(d_src, 0x5a, 4096 * 128));

    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t a, b, fork, join;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    const int sms = prop.multiProcessorCount;
    const int grid = sms * 8;
    printf("device %s, %d SMs, n=%llu, pool %s (%llu GiB registered)\n", prop.name, sms, (unsigned long long) n, path,
           (unsigned long long) (bytes >> 30));
    printf("%-44s %9s %10s %8s\n", "case", "ms", "M/s", "GB/s");

    auto timed = [&](const char* name, double payload, auto body) {
        float best = 1e30f;
        for (int rep = 0; rep < 5; ++rep) {
            CK(cudaEventRecord(a, s1));
            body();
            CK(cudaEventRecord(b, s1));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            best = std::min(best, ms);
        }
        CK(cudaGetLastError());
        printf("%-44s %9.3f %10.1f %8.2f\n", name, best, n / (best * 1e3), payload / (best * 1e6));
    };
    const double vbytes = n * 128.0;
    timed("values 128B, sorted random blocks, fence", vbytes, [&] { values<true><<<grid, 256, 0, s1>>>(pool, d_blocks, d_src, n); });
    timed("values 128B, dense blocks, fence", vbytes, [&] { values<true><<<grid, 256, 0, s1>>>(pool, d_dense, d_src, n); });
    timed("values 128B, sorted random blocks, no fence", vbytes, [&] { values<false><<<grid, 256, 0, s1>>>(pool, d_blocks, d_src, n); });
    timed("meta words 8B, sorted slots, fence", n * 8.0, [&] { words<true><<<grid, 256, 0, s1>>>(pool, d_slots, n); });
    timed("meta words 8B, sorted slots, no fence", n * 8.0, [&] { words<false><<<grid, 256, 0, s1>>>(pool, d_slots, n); });
    timed("meta words 8B, unsorted slots, fence", n * 8.0, [&] { words<true><<<grid, 256, 0, s1>>>(pool, d_unsorted, n); });
    timed("meta words 8B, 2 a line, fence", n * 8.0, [&] { words<true><<<grid, 256, 0, s1>>>(pool, d_pairs, n); });
    timed("meta words 8B, 4 a line, fence", n * 8.0, [&] { words<true><<<grid, 256, 0, s1>>>(pool, d_quads, n); });
    timed("whole 64B lines, the 2-a-line lines (M/s: words)", n * 32.0, [&] { lines<<<grid, 256, 0, s1>>>(pool, d_pairs, n / 2, 2); });
    timed("claim+key 16B, sorted slots, fence", n * 16.0, [&] { pairs<<<grid, 256, 0, s1>>>(pool, d_slots, n); });
    timed("whole 64B lines, sorted, fence", n * 64.0, [&] { lines<<<grid, 256, 0, s1>>>(pool, d_slots, n, 1); });
    timed("values then meta words (one stream)", vbytes + n * 8.0, [&] {
        values<true><<<grid, 256, 0, s1>>>(pool, d_blocks, d_src, n);
        words<true><<<grid, 256, 0, s1>>>(pool, d_slots, n);
    });
    timed("values beside meta words (two streams)", vbytes + n * 8.0, [&] {
        CK(cudaEventRecord(fork, s1));
        CK(cudaStreamWaitEvent(s2, fork, 0));
        values<true><<<grid, 256, 0, s1>>>(pool, d_blocks, d_src, n);
        words<true><<<grid, 256, 0, s2>>>(pool, d_slots, n);
        CK(cudaEventRecord(join, s2));
        CK(cudaStreamWaitEvent(s1, join, 0));
    });
    timed("values beside claim+key (two streams)", vbytes + n * 16.0, [&] {
        CK(cudaEventRecord(fork, s1));
        CK(cudaStreamWaitEvent(s2, fork, 0));
        values<true><<<grid, 256, 0, s1>>>(pool, d_blocks, d_src, n);
        pairs<<<grid, 256, 0, s2>>>(pool, d_slots, n);
        CK(cudaEventRecord(join, s2));
        CK(cudaStreamWaitEvent(s1, join, 0));
    });
    for (unsigned share : {2u, 4u, 6u}) {
        char name[64];
        snprintf(name, sizeof name, "values and meta words fused, %u/8 values", share);
        timed(name, vbytes + n * 8.0, [&] {
            fused<<<grid, 256, 0, s1>>>(pool, d_blocks, d_src, d_slots, n, grid * share / 8);
        });
    }
    CK(cudaHostUnregister(host));
    munmap(host, bytes);
    close(fd);
    unlink(path);
    return 0;
}
