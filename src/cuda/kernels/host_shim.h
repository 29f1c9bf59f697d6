// CUDA-on-CPU shim for the host tier: the same kernel sources compiled by the host C++
// compiler. A launch runs one OS thread per CUDA thread of a block; all threads walk the grid's
// blocks in the same order, so `__shared__` (a function-local static) is one block's shared
// memory, and __syncthreads() is a real barrier across the block's threads. Kernels must reach
// every barrier with every thread (as CUDA requires); a kernel that does not hangs, and the
// runner's timeout reports it.
#pragma once
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <vector>
#include <thread>

struct nt_uint3 { unsigned x, y, z; };
typedef nt_uint3 uint3;
static thread_local nt_uint3 threadIdx, blockIdx;
static nt_uint3 blockDim, gridDim;
static pthread_barrier_t nt_block_barrier;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(...)

static inline void __syncthreads() { pthread_barrier_wait(&nt_block_barrier); }

// Runs `body` as a grid of blocks of threads (see above).
template <class F>
static void nt_launch(nt_uint3 grid, nt_uint3 block, F body) {
    gridDim = grid;
    blockDim = block;
    unsigned nthreads = block.x * block.y * block.z;
    pthread_barrier_init(&nt_block_barrier, nullptr, nthreads);
    std::vector<std::thread> threads;
    threads.reserve(nthreads);
    for (unsigned tid = 0; tid < nthreads; ++tid) {
        threads.emplace_back([=, &body] {
            threadIdx = nt_uint3{tid % block.x, (tid / block.x) % block.y, tid / (block.x * block.y)};
            for (unsigned bz = 0; bz < grid.z; ++bz)
                for (unsigned by = 0; by < grid.y; ++by)
                    for (unsigned bx = 0; bx < grid.x; ++bx) {
                        blockIdx = nt_uint3{bx, by, bz};
                        body();
                        // The next block may reuse shared memory only after every thread left this one.
                        pthread_barrier_wait(&nt_block_barrier);
                    }
        });
    }
    for (auto& t : threads) t.join();
    pthread_barrier_destroy(&nt_block_barrier);
}
